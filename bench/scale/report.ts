// The scale section's results and the tables printed for them (GitHub markdown, like the rest of the benchmark).
import type { ClaimAfterDrain } from "./claim.js";

export interface ReadRow {
  readonly name: string;
  /** Median ms at each level. */
  readonly ms: number[];
  /** Each level's median over the first level's. */
  readonly ratio: number[];
}

export interface ScaleResults {
  readonly date: string;
  readonly machine: Record<string, unknown>;
  readonly quick: boolean;
  readonly levels: readonly number[];
  readonly runLevels: readonly number[];
  readonly reads: ReadRow[];
  readonly runs: ReadRow[];
  readonly claim: ClaimAfterDrain;
}

const table = (head: string[], rows: string[][]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
};

const size = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1_000 ? `${n / 1_000}k` : String(n));
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

const readsTable = (levels: readonly number[], rows: ReadRow[], what: string) =>
  table(
    ["read", ...levels.map((l) => `${size(l)} ${what}, ms`), `${size(levels[levels.length - 1]!)} / ${size(levels[0]!)}`],
    rows.map((r) => [r.name, ...r.ms.map(ms), `${r.ratio[r.ratio.length - 1]!.toFixed(2)}x`]),
  );

export const renderScale = (r: ScaleResults): string => {
  const m = r.machine;
  const out = [
    `${r.date.slice(0, 10)} · ${String(m.cpus)} × ${String(m.cpuModel)} · Node ${String(m.node)} · PostgreSQL ${String(m.postgres)} (${String(m.server)}) · median per read${r.quick ? " · --quick" : ""}`,
    "",
    "Reads as the queue grows (as many dead letters as queued jobs; 100 running)",
    readsTable(r.levels, r.reads, "queued"),
  ];
  if (r.runs.length > 0) out.push("", "Reads as the run history grows (a run in 1,000 with a correlation id; 2 in 5 failed)", readsTable(r.runLevels, r.runs, "runs"));
  const c = r.claim;
  out.push(
    "",
    `Claim of 10 after draining ${c.drained.toLocaleString("en-US")} jobs (${c.drainJobsPerSec.toLocaleString("en-US")} jobs/s; ${c.updates.toLocaleString("en-US")} row updates, ${c.hotUpdates} HOT; ${c.autovacuum}; queue: ${c.reloptions.join(", ") || "defaults"})`,
    table(
      ["when", "s after drain", "dead tuples", "claim p50 ms", "claim p95 ms", "p50 vs after VACUUM"],
      c.points.map((p) => [
        p.when,
        String(p.atS),
        p.deadTuples.toLocaleString("en-US"),
        p.claimP50Ms.toFixed(3),
        p.claimP95Ms.toFixed(3),
        `${(p.claimP50Ms / c.points[c.points.length - 1]!.claimP50Ms).toFixed(2)}x`,
      ]),
    ),
  );
  if (!c.autovacuumRan) out.push("", `(autovacuum did not visit the queue within the wait; ${c.autovacuum})`);
  return out.join("\n");
};
