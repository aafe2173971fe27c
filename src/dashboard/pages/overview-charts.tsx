/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import { RANGES, type Series, type SeriesRange, type ThroughputPoint } from "../../store/admin/series.js";
import { Bars, type BarSeries } from "../charts/bars.js";
import { countTicks, niceDuration, niceMax } from "../charts/scale.js";
import { dur, num } from "../format.js";

const UI: Record<SeriesRange, { label: string; per: string; x: [string, string, string] }> = {
  "1h": { label: "Last hour", per: "minute", x: ["60 min ago", "30 min ago", "now"] },
  "24h": { label: "24 hours", per: "15 minutes", x: ["24 h ago", "12 h ago", "now"] },
  "7d": { label: "7 days", per: "2 hours", x: ["7 days ago", "3½ days ago", "now"] },
};

const THROUGHPUT: BarSeries[] = [
  { cls: "s-ok", label: "succeeded" },
  { cls: "s-fail", label: "retried or requeued" },
  { cls: "s-dead", label: "dead-lettered" },
];
const DEPTH: BarSeries[] = [
  { cls: "s-run", label: "running" },
  { cls: "s-due", label: "due, waiting" },
];
const WAIT: BarSeries[] = [{ cls: "s-wait", label: "oldest wait" }];

/** The range links above the charts: plain links, so they work without the page's script. */
export const RangePicker: FC<{ base: string; range: SeriesRange }> = ({ base, range }) => (
  <nav class="tabs" aria-label="Chart range">
    {(Object.keys(RANGES) as SeriesRange[]).map((r) => (
      <a href={`${base}/?range=${r}`} aria-current={r === range ? "page" : undefined}>
        {UI[r].label}
      </a>
    ))}
  </nav>
);

const sum = (rows: ReadonlyArray<readonly number[]>, k: number) => rows.reduce((n, r) => n + (r[k] ?? 0), 0);

/** Throughput (all jobs, then one small chart per job on one shared scale), queue depth and oldest wait. */
export const Charts: FC<{ s: Series }> = ({ s }) => {
  const ui = UI[s.range];
  const start = Date.parse(s.start);
  const slot = (at: string) => Math.round((Date.parse(at) - start) / s.bucketMs);
  const empty = (width: number) => Array.from({ length: s.buckets }, () => Array<number>(width).fill(0));
  const add = (rows: number[][], p: Omit<ThroughputPoint, "job">) => {
    const i = slot(p.at);
    if (rows[i]) [p.succeeded, p.retried + p.requeued, p.deadLettered].forEach((n, k) => (rows[i]![k]! += n));
  };
  const all = empty(3);
  for (const p of s.totals) add(all, p);
  // The series gives the busiest jobs of the range only (a dozen): a chart each, on one shared scale.
  const byJob = new Map<string, number[][]>();
  for (const p of s.throughput) {
    if (!byJob.has(p.job)) byJob.set(p.job, empty(3));
    add(byJob.get(p.job)!, p);
  }
  const depth = empty(2);
  const wait = empty(1);
  for (const p of s.queue) {
    const i = slot(p.at);
    if (!depth[i]) continue;
    depth[i] = [p.running, p.due];
    wait[i] = [p.oldestWaitMs ?? 0];
  }
  const top = (rows: number[][]) => Math.max(0, ...rows.map((r) => r.reduce((a, b) => a + b, 0)));
  const shown = [...byJob.keys()].sort();
  const shared = niceMax(Math.max(0, ...shown.map((job) => top(byJob.get(job)!))));
  const at = (i: number) => `${new Date(start + i * s.bucketMs).toISOString().slice(5, 16).replace("T", " ")} UTC`;
  const unit = `jobs per ${ui.per}`;
  const totals = (rows: number[][]) => THROUGHPUT.map((x, k) => `${num(sum(rows, k))} ${x.label}`).join(" · ");
  const chart = (id: string, name: string, rows: number[][], max: number, h: number) => (
    <Bars
      id={id}
      title={
        <>
          <strong>{name}</strong> <span class="muted">{totals(rows)}</span>
        </>
      }
      height={h}
      max={max}
      ticks={countTicks(max)}
      fmt={num}
      unit={unit}
      series={THROUGHPUT}
      values={rows}
      at={at}
      x={ui.x}
      summary={`${name}, ${ui.label.toLowerCase()}, ${unit}: ${totals(rows)}`}
    />
  );
  const allMax = niceMax(top(all));
  const depthMax = niceMax(top(depth));
  const waitMax = niceDuration(top(wait));
  return (
    <>
      <Legend series={THROUGHPUT} />
      {chart("chart-all", "All jobs", all, allMax, 150)}
      <div class="sm" id="per-job">
        {shown.map((job) => chart(`chart-job-${encodeURIComponent(job)}`, job, byJob.get(job)!, shared, 48))}
      </div>
      {s.jobs > shown.length ? <p class="muted">and {num(s.jobs - shown.length)} less busy {s.jobs - shown.length === 1 ? "job" : "jobs"} (the run history lists every run)</p> : null}
      <h2>Queue over time</h2>
      <Legend series={DEPTH} />
      <div class="sm">
        <Bars id="chart-depth" title={<strong>Queue depth</strong>} height={90} max={depthMax} ticks={countTicks(depthMax)} fmt={num}
          unit={`jobs, highest per ${ui.per}`} series={DEPTH} values={depth} at={at} x={ui.x}
          summary={`Queue depth, ${ui.label.toLowerCase()}: at most ${num(depthMax)} jobs due or running`} />
        <Bars id="chart-wait" title={<strong>Oldest due job's wait</strong>} height={90} max={waitMax} ticks={[0, waitMax / 2, waitMax]} fmt={dur}
          unit={`longest per ${ui.per}`} series={WAIT} values={wait} at={at} x={ui.x}
          summary={`Oldest wait, ${ui.label.toLowerCase()}: up to ${dur(top(wait))}`} />
      </div>
    </>
  );
};

const Legend: FC<{ series: readonly BarSeries[] }> = ({ series }) => (
  <p class="legend" aria-hidden="true">
    {series.map((x) => (
      <span>
        <span class={`sw ${x.cls}`} />
        {x.label}
      </span>
    ))}
  </p>
);
