// Turns samples into medians, ratios and goal checks; renders the table.
import type { DrainSample } from "./measure/drain.js";
import type { IdleTickResult } from "./measure/idle.js";
import { renderSections, type SectionResults } from "./report-sections.js";
import { median, round } from "./stats.js";
import type { SystemName } from "./systems/system.js";

export interface DrainRow {
  readonly system: SystemName;
  readonly variant: string;
  readonly recommended: boolean;
  readonly concurrency: number;
  readonly jobsPerSec: number;
  /** Statements per job counted at the driver. */
  readonly statementsPerJob: number;
  /** The same from pg_stat_statements; null when the server does not have it. */
  readonly serverStatementsPerJob: number | null;
  /** Statements per tick (ours only). */
  readonly statementsPerTick: number | null;
  /** Each run's jobs/s, so the spread behind the median shows. */
  readonly runsJobsPerSec: number[];
}

export interface Latency {
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly p99Ms: number;
  readonly samples: number;
}

export interface EnqueueFigures {
  /** POST /api/jobs, one job per request, autocannon at 32 connections. */
  readonly httpReqPerSec: number | null;
  readonly httpP50Ms: number | null;
  readonly httpP99Ms: number | null;
  /** The same request sent one at a time: the latency of a single enqueue. */
  readonly httpSingleP50Ms: number | null;
  readonly httpSingleP99Ms: number | null;
  /** Ours, jobs per second through enqueueMany in chunks. */
  readonly batchJobsPerSec: number;
  readonly bulk: Array<{ system: SystemName; jobsPerSec: number }>;
  readonly note?: string;
}

export interface Ratio {
  readonly concurrency: number;
  /** The fastest peer in its recommended configuration. */
  readonly bestPeer: string | null;
  readonly vsBestPeer: number | null;
  /** The fastest peer in any configuration measured (graphile-worker's 500-job prefetch included). */
  readonly fastestPeer: string | null;
  readonly vsFastestPeer: number | null;
  readonly vsBareSql: number | null;
}

export interface Goal {
  readonly goal: string;
  readonly target: string;
  readonly measured: string;
  readonly met: boolean | null;
}

export interface Results extends SectionResults {
  readonly date: string;
  readonly machine: Record<string, unknown>;
  readonly quick: boolean;
  readonly runs: number;
  readonly n: number;
  readonly chunk: number;
  readonly drain: DrainRow[];
  readonly ratios: Ratio[];
  readonly idleTick: IdleTickResult;
  readonly enqueue: EnqueueFigures;
  readonly latency: { kickOn: Latency | null; kickOff: Latency | null; note?: string };
  readonly goals: Goal[];
  readonly notes: string[];
}

const PEERS: readonly SystemName[] = ["pg-boss", "graphile-worker"];

const ORDER: readonly SystemName[] = ["ours", "bare-sql", "pg-boss", "graphile-worker"];

export const drainRows = (samples: readonly DrainSample[], n: number): DrainRow[] => {
  const keyOf = (s: DrainSample) => `${s.system}|${s.variant}@${s.concurrency}`;
  const sorted = [...samples].sort(
    (a, b) => a.concurrency - b.concurrency || ORDER.indexOf(a.system) - ORDER.indexOf(b.system) || Number(b.recommended) - Number(a.recommended),
  );
  const keys = [...new Set(sorted.map(keyOf))];
  return keys.map((key) => {
    const group = samples.filter((s) => keyOf(s) === key);
    const first = group[0]!;
    const server = group.map((s) => s.serverStatements).filter((x): x is number => x !== null);
    const ticks = group.map((s) => s.ticks).filter((x): x is number => x !== null);
    const rates = group.map((s) => n / (s.drainMs / 1000));
    return {
      system: first.system,
      variant: first.variant,
      recommended: first.recommended,
      concurrency: first.concurrency,
      jobsPerSec: Math.round(median(rates)),
      statementsPerJob: round(median(group.map((s) => s.driverStatements / n)), 4),
      serverStatementsPerJob: server.length > 0 ? round(median(server.map((x) => x / n)), 4) : null,
      statementsPerTick: ticks.length > 0 ? round(median(group.map((s) => s.driverStatements / (s.ticks ?? 1))), 1) : null,
      runsJobsPerSec: rates.map((r) => Math.round(r)),
    };
  });
};

export const ratios = (rows: readonly DrainRow[]): Results["ratios"] => {
  const levels = [...new Set(rows.map((r) => r.concurrency))];
  return levels.map((concurrency) => {
    const at = rows.filter((r) => r.concurrency === concurrency);
    const ours = at.find((r) => r.system === "ours");
    const bare = at.find((r) => r.system === "bare-sql");
    const peers = at.filter((r) => PEERS.includes(r.system)).sort((a, b) => b.jobsPerSec - a.jobsPerSec);
    const best = peers.find((r) => r.recommended);
    const fastest = peers[0];
    return {
      concurrency,
      bestPeer: best ? `${best.system} (${best.variant})` : null,
      vsBestPeer: ours && best ? round(ours.jobsPerSec / best.jobsPerSec, 2) : null,
      fastestPeer: fastest ? `${fastest.system} (${fastest.variant})` : null,
      vsFastestPeer: ours && fastest ? round(ours.jobsPerSec / fastest.jobsPerSec, 2) : null,
      vsBareSql: ours && bare ? round(ours.jobsPerSec / bare.jobsPerSec, 2) : null,
    };
  });
};

export const bulkRates = (samples: readonly DrainSample[], n: number): EnqueueFigures["bulk"] => {
  const systems = [...new Set(samples.map((s) => s.system))].filter((s) => s !== "bare-sql");
  return systems.map((system) => ({
    system,
    jobsPerSec: Math.round(median(samples.filter((s) => s.system === system).map((s) => n / (s.fillMs / 1000)))),
  }));
};

export const goals = (r: Omit<Results, "goals">): Goal[] => {
  const at32 = r.ratios.find((x) => x.concurrency === 32);
  const ours32 = r.drain.find((d) => d.system === "ours" && d.concurrency === 32);
  const bestBulk = Math.max(0, ...r.enqueue.bulk.filter((b) => PEERS.includes(b.system)).map((b) => b.jobsPerSec));
  const list: Goal[] = [
    {
      goal: "drain at concurrency 32 vs best peer",
      target: ">= 1.5x",
      measured: at32?.vsBestPeer != null ? `${at32.vsBestPeer}x (${at32.bestPeer})` : "not measured",
      met: at32?.vsBestPeer != null ? at32.vsBestPeer >= 1.5 : null,
    },
    {
      goal: "drain at concurrency 32 vs bare-SQL baseline",
      target: ">= 0.8x",
      measured: at32?.vsBareSql != null ? `${at32.vsBareSql}x` : "not measured",
      met: at32?.vsBareSql != null ? at32.vsBareSql >= 0.8 : null,
    },
    {
      goal: "statements per job at concurrency 32",
      // A claim and a settle per batch of 32, side by side (up to 0.07 for pipelining).
      target: "<= 0.07",
      measured: ours32 ? String(ours32.statementsPerJob) : "not measured",
      met: ours32 ? ours32.statementsPerJob <= 0.07 : null,
    },
    {
      goal: "idle tick",
      target: "1 statement",
      measured: `${r.idleTick.statements} statement(s), ${round(r.idleTick.ms, 2)} ms`,
      met: r.idleTick.statements === 1,
    },
    {
      goal: "bulk enqueue vs best peer",
      target: ">= 1.0x",
      measured: bestBulk > 0 ? `${round(r.enqueue.batchJobsPerSec / bestBulk, 2)}x` : "not measured",
      met: bestBulk > 0 ? r.enqueue.batchJobsPerSec >= bestBulk : null,
    },
    {
      goal: "single HTTP enqueue p50 (one request at a time)",
      target: "< 2 ms",
      measured: r.enqueue.httpSingleP50Ms != null ? `${r.enqueue.httpSingleP50Ms} ms (at 32 connections: ${r.enqueue.httpP50Ms} ms)` : "not measured",
      met: r.enqueue.httpSingleP50Ms != null ? r.enqueue.httpSingleP50Ms < 2 : null,
    },
    {
      goal: "enqueue -> start p50 with the kick",
      target: "< 3 ms",
      measured: r.latency.kickOn ? `${r.latency.kickOn.p50Ms} ms` : "not measured",
      met: r.latency.kickOn ? r.latency.kickOn.p50Ms < 3 : null,
    },
  ];
  return list;
};

const table = (head: string[], rows: string[][]): string => {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n");
};

const num = (x: number | null | undefined, digits = 0) => (x == null || !Number.isFinite(x) ? "-" : x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));

/** The tables printed to the terminal and pasted into the README (GitHub markdown). */
export const render = (r: Results): string => {
  const out: string[] = [];
  const m = r.machine;
  out.push(
    `${r.date.slice(0, 10)} · ${m.cpus} × ${m.cpuModel} · ${m.memoryGb} GB · Node ${m.node} · PostgreSQL ${m.postgres} (${m.server}) · ` +
      `N = ${r.n.toLocaleString("en-US")} no-op jobs · median of ${r.runs} runs${r.quick ? " · --quick" : ""}`,
  );
  out.push("");
  const levels = [...new Set(r.drain.map((d) => d.concurrency))];
  const rows: string[][] = [];
  for (const c of levels) {
    for (const d of r.drain.filter((x) => x.concurrency === c)) {
      const s = d.system;
      const ratio = r.ratios.find((x) => x.concurrency === c);
      rows.push([
        String(c),
        s === "ours" || s === "bare-sql" ? s : `${s} (${d.variant})`,
        num(d.jobsPerSec),
        num(d.statementsPerJob, 3),
        d.serverStatementsPerJob === null ? "-" : num(d.serverStatementsPerJob, 3),
        d.statementsPerTick === null ? "-" : num(d.statementsPerTick, 0),
        s === "ours" && ratio?.vsBestPeer != null ? `${ratio.vsBestPeer.toFixed(2)}x` : "",
        s === "ours" && ratio?.vsFastestPeer != null ? `${ratio.vsFastestPeer.toFixed(2)}x` : "",
        s === "ours" && ratio?.vsBareSql != null ? `${ratio.vsBareSql.toFixed(2)}x` : "",
      ]);
    }
  }
  out.push("Drain (jobs queued first, then drained)");
  out.push(table(["concurrency", "system", "jobs/s", "stmt/job (driver)", "stmt/job (server)", "stmt/tick", "vs best peer", "vs fastest peer config", "vs bare SQL"], rows));
  out.push("");
  out.push("Enqueue and ticks");
  const bulkBest = Math.max(0, ...r.enqueue.bulk.filter((b) => b.system !== "ours").map((b) => b.jobsPerSec));
  out.push(
    table(
      ["measure", "ours", "pg-boss", "graphile-worker"],
      [
        [
          `bulk enqueue, jobs/s (chunks of ${r.chunk})`,
          `${num(r.enqueue.batchJobsPerSec)}${bulkBest > 0 ? ` (${(r.enqueue.batchJobsPerSec / bulkBest).toFixed(2)}x best peer)` : ""}`,
          num(r.enqueue.bulk.find((b) => b.system === "pg-boss")?.jobsPerSec),
          num(r.enqueue.bulk.find((b) => b.system === "graphile-worker")?.jobsPerSec),
        ],
        ["HTTP enqueue, req/s (32 connections)", num(r.enqueue.httpReqPerSec), "", ""],
        ["HTTP enqueue p50 / p99 ms (32 connections)", r.enqueue.httpP50Ms == null ? "-" : `${num(r.enqueue.httpP50Ms, 0)} / ${num(r.enqueue.httpP99Ms, 0)}`, "", ""],
        [
          "HTTP enqueue p50 / p99 ms (one at a time)",
          r.enqueue.httpSingleP50Ms == null ? "-" : `${num(r.enqueue.httpSingleP50Ms, 2)} / ${num(r.enqueue.httpSingleP99Ms, 2)}`,
          "",
          "",
        ],
        ["idle tick: statements / median ms", `${r.idleTick.statements} / ${num(r.idleTick.ms, 2)}`, "", ""],
        [
          "enqueue → start p50/p95/p99 ms, kick on",
          r.latency.kickOn ? `${num(r.latency.kickOn.p50Ms, 2)} / ${num(r.latency.kickOn.p95Ms, 2)} / ${num(r.latency.kickOn.p99Ms, 2)}` : "-",
          "",
          "",
        ],
        [
          "enqueue → start p50/p95/p99 ms, kick off",
          r.latency.kickOff ? `${num(r.latency.kickOff.p50Ms, 0)} / ${num(r.latency.kickOff.p95Ms, 0)} / ${num(r.latency.kickOff.p99Ms, 0)}` : "-",
          "",
          "",
        ],
      ],
    ),
  );
  out.push(...renderSections(r, table));
  out.push("");
  out.push("Goals");
  out.push(table(["goal", "target", "measured", "met"], r.goals.map((g) => [g.goal, g.target, g.measured, g.met === null ? "n/a" : g.met ? "yes" : "NO"])));
  if (r.notes.length > 0) {
    out.push("");
    for (const note of r.notes) out.push(`- ${note}`);
  }
  return out.join("\n");
};
