import type { FC } from "hono/jsx";
import { type MinuteCounts, type Stats } from "../../store/admin/stats.js";
import { qs, type Routes } from "../dashboard-context.js";
import { span, Time } from "../format.js";
import { Page } from "../layout.js";

const MINUTE = 60_000;
const WINDOW = 60;

interface Bucket {
  minute: number;
  succeeded: number;
  failed: number;
  dead: number;
}

/** Sixty one-minute buckets ending with the current minute; minutes without rows are zero. */
export const buckets = (rows: readonly MinuteCounts[], now: string, job?: string): Bucket[] => {
  const end = Math.floor(Date.parse(now) / MINUTE) * MINUTE;
  const out: Bucket[] = Array.from({ length: WINDOW }, (_, i) => ({ minute: end - (WINDOW - 1 - i) * MINUTE, succeeded: 0, failed: 0, dead: 0 }));
  for (const r of rows) {
    if (job !== undefined && r.job !== job) continue;
    const b = out[(Date.parse(r.minute) - out[0]!.minute) / MINUTE];
    if (!b) continue;
    b.succeeded += r.succeeded;
    // `failed` counts every attempt that did not succeed, dead-lettered ones included; the chart splits them.
    b.failed += r.failed - r.deadLettered;
    b.dead += r.deadLettered;
  }
  return out;
};

const Chart: FC<{ title: string; data: Bucket[]; id: string }> = ({ title, data, id }) => {
  const total = (k: keyof Omit<Bucket, "minute">) => data.reduce((n, b) => n + b[k], 0);
  const max = Math.max(1, ...data.map((b) => b.succeeded + b.failed + b.dead));
  const H = 100;
  const W = BAR_W;
  const summary = `${title}, last hour: ${total("succeeded")} succeeded, ${total("failed")} failed and retried or requeued, ${total("dead")} dead-lettered (busiest minute ${max === 1 && total("succeeded") + total("failed") + total("dead") === 0 ? 0 : max})`;
  return (
    <figure id={id}>
      <figcaption>
        <strong>{title}</strong>{" "}
        <span class="muted">
          {total("succeeded")} succeeded · {total("failed")} failed · {total("dead")} dead-lettered
        </span>
      </figcaption>
      <svg class="chart" viewBox={`0 0 ${CHART_W} ${H + 14}`} role="img" aria-label={summary}>
        <title>{summary}</title>
        {data.map((b, i) => {
          let y = H;
          const parts: Array<[number, string, string]> = [
            [b.succeeded, "s-ok", "succeeded"],
            [b.failed, "s-fail", "failed"],
            [b.dead, "s-dead", "dead-lettered"],
          ];
          return parts.map(([n, cls, label]) => {
            if (n === 0) return null;
            const h = (n / max) * H;
            y -= h;
            return (
              <rect x={i * W + 1} y={y} width={W - 2} height={h} class={cls}>
                <title>{`${new Date(b.minute).toISOString().slice(11, 16)} UTC: ${n} ${label}`}</title>
              </rect>
            );
          });
        })}
        <text x="2" y={H + 12} font-size="10" fill="#57606a">
          60 min ago
        </text>
        <text x={CHART_W - 2} y={H + 12} font-size="10" fill="#57606a" text-anchor="end">
          now
        </text>
      </svg>
    </figure>
  );
};

const BAR_W = 10;
const CHART_W = WINDOW * BAR_W;

const REPORT_FIELDS: ReadonlyArray<[string, string]> = [
  ["claimed", "Claimed"],
  ["succeeded", "Succeeded"],
  ["retried", "Retried"],
  ["deadLettered", "Dead-lettered"],
  ["requeued", "Requeued at the deadline"],
  ["leaseLost", "Lease lost"],
  ["reclaimed", "Reclaimed"],
  ["durationMs", "Duration (ms)"],
];

/** A platform cron runs every minute; this long without a tick means it is not running. */
const STALE_TICK_MS = 3 * MINUTE;

const Overview: FC<{ base: string; csrf: string; stats: Stats }> = ({ base, csrf, stats }) => {
  const now = Date.parse(stats.now);
  const byJob = new Map<string, { queued: number; running: number; oldest: number | null }>();
  for (const d of stats.queue) {
    const row = byJob.get(d.job) ?? { queued: 0, running: 0, oldest: null };
    row[d.status] += d.count;
    if (d.oldestWaitingMs !== null) row.oldest = Math.max(row.oldest ?? 0, d.oldestWaitingMs);
    byJob.set(d.job, row);
  }
  const queued = stats.queue.filter((d) => d.status === "queued").reduce((n, d) => n + d.count, 0);
  const running = stats.queue.filter((d) => d.status === "running").reduce((n, d) => n + d.count, 0);
  const dead = stats.deadLetters.reduce((n, d) => n + d.count, 0);
  const chartJobs = [...new Set(stats.minutes.map((m) => m.job))].sort();
  const tickAge = stats.lastTickAt ? now - Date.parse(stats.lastTickAt) : null;
  return (
    <Page title="Overview" base={base} section="overview" csrf={csrf}>
      {tickAge === null ? (
        <p class="alert" role="alert">
          No tick has run yet. Jobs run only when the platform cron calls the tick every minute.
        </p>
      ) : tickAge > STALE_TICK_MS ? (
        <p class="alert" role="alert">
          No tick for {span(tickAge)}: check the platform cron.
        </p>
      ) : null}
      <section class="grid" aria-label="Totals">
        <div class="card" id="card-queued">
          <div class="n">{queued}</div>
          <div class="l">queued</div>
        </div>
        <div class="card" id="card-running">
          <div class="n">{running}</div>
          <div class="l">running now</div>
        </div>
        <div class="card" id="card-oldest">
          <div class="n">{stats.oldestWaitingMs === null ? "—" : span(stats.oldestWaitingMs)}</div>
          <div class="l">oldest due job has waited</div>
        </div>
        <div class="card" id="card-dead">
          <div class="n">
            <a href={`${base}/dead-letters`}>{dead}</a>
          </div>
          <div class="l">dead letters</div>
        </div>
      </section>

      <h2>Last hour, per minute</h2>
      <p class="legend" aria-hidden="true">
        <span>
          <span class="sw s-ok" />
          succeeded
        </span>
        <span>
          <span class="sw s-fail" />
          failed (retried or requeued)
        </span>
        <span>
          <span class="sw s-dead" />
          dead-lettered
        </span>
      </p>
      <Chart title="All jobs" data={buckets(stats.minutes, stats.now)} id="chart-all" />
      {chartJobs.map((job) => (
        <Chart title={job} data={buckets(stats.minutes, stats.now, job)} id={`chart-${job}`} />
      ))}

      <h2>Queue</h2>
      {byJob.size === 0 ? (
        <p class="muted">The queue is empty.</p>
      ) : (
        <div class="table-wrap">
          <table id="queue-depth">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col" class="num">Queued</th>
                <th scope="col" class="num">Running</th>
                <th scope="col">Oldest due waited</th>
              </tr>
            </thead>
            <tbody>
              {[...byJob.entries()].map(([job, r]) => (
                <tr>
                  <td>
                    <a href={`${base}/jobs${qs({ job })}`}>{job}</a>
                  </td>
                  <td class="num">{r.queued}</td>
                  <td class="num">{r.running}</td>
                  <td>{r.oldest === null ? "—" : span(r.oldest)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Dead letters</h2>
      {stats.deadLetters.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <div class="table-wrap">
          <table id="dead-by-job">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col" class="num">Dead letters</th>
                <th scope="col">Latest</th>
              </tr>
            </thead>
            <tbody>
              {stats.deadLetters.map((d) => (
                <tr>
                  <td>
                    <a href={`${base}/dead-letters${qs({ job: d.job })}`}>{d.job}</a>
                  </td>
                  <td class="num">{d.count}</td>
                  <td>
                    <Time iso={d.lastDeadAt} now={now} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <h2>Last tick</h2>
      <dl class="kv" id="last-tick">
        <dt>Started</dt>
        <dd>
          <Time iso={stats.lastTickAt} now={now} />
        </dd>
        <dt>Last busy tick</dt>
        <dd>
          <Time iso={stats.lastReportAt} now={now} />
        </dd>
        {stats.lastReport
          ? REPORT_FIELDS.map(([key, label]) => (
              <>
                <dt>{label}</dt>
                <dd>{String(stats.lastReport![key] ?? "—")}</dd>
              </>
            ))
          : null}
      </dl>
    </Page>
  );
};

export const overviewPages: Routes = (app, { base }) => {
  // Mounted at /dashboard, "/" is /dashboard itself; /dashboard/ comes through the catch-all below, which
  // matches it (strict routing keeps the two apart).
  app.get("/", async (c) => c.html(<Overview base={base} csrf={c.var.session.csrf} stats={await c.var.jobs.stats()} />));
  app.get("*", async (c, next) => {
    if (c.req.path !== `${base}/`) return next();
    return c.html(<Overview base={base} csrf={c.var.session.csrf} stats={await c.var.jobs.stats()} />);
  });
};
