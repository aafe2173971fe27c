/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { DurationSummary } from "../../store/admin/series.js";
import { dur, num } from "../format.js";
import { Table } from "../parts.js";
import { percentile } from "./scale.js";

/** Position on the shared log scale, 1 ms to 100 s, as a percentage. */
const pos = (ms: number) => Math.max(1, Math.min(100, (Math.log10(Math.max(ms, 1)) / 5) * 100));
const SCALE = ["1 ms", "10 ms", "100 ms", "1 s", "10 s", "100 s"];

/**
 * Each job's median and 95th percentile run time from its histogram, as numbers and as bars on
 * one logarithmic scale for all jobs. A percentile is the bound of the bucket it falls in (at
 * most the slowest run), so the page says "≤".
 */
export const Durations: FC<{ rows: readonly DurationSummary[] }> = ({ rows }) => {
  const shown = rows.map((r) => ({ ...r, runs: r.hist.reduce((n, c) => n + c, 0), p50: percentile(r.hist, r.maxMs, 0.5), p95: percentile(r.hist, r.maxMs, 0.95) }));
  if (!shown.some((r) => r.runs > 0)) return <p class="muted">No runs in this range.</p>;
  const scale = (
    <span class="scale">
      {SCALE.map((l) => (
        <span>{l}</span>
      ))}
    </span>
  );
  return (
    <Table
      id="durations"
      cols={[{ l: "Job" }, { l: "Runs", c: "num" }, { l: "p50", c: "num" }, { l: "p95", c: "num" }, { l: "Slowest", c: "num" }, { l: "1 ms to 100 s", c: "bar", h: scale }]}
      rows={shown
        .filter((r) => r.runs > 0)
        .map((r) => [
          r.job,
          num(r.runs),
          `≤ ${dur(r.p50!)}`,
          `≤ ${dur(r.p95!)}`,
          dur(r.maxMs),
          <svg width="100%" height="12" viewBox="0 0 100 12" preserveAspectRatio="none" aria-hidden="true">
            <rect class="p95" width={pos(r.p95!)} height="12" />
            <rect class="p50" width={pos(r.p50!)} height="12" />
          </svg>,
        ])}
    />
  );
};
