// The tables of the sections beside the drains: run history on vs off, flow control's cost,
// the fleet (fan-out across invocations) and new jobs starting while a tick is busy.
import type { BusyLatency } from "./measure/busy.js";
import type { FleetLevel } from "./measure/fleet.js";
import type { FlowResult } from "./measure/flow.js";
import type { HistoryResult } from "./measure/history.js";
import { HISTORY_GOAL } from "./measure/history.js";

export interface FleetResult {
  readonly jobs: number;
  readonly jobMs: number;
  readonly concurrency: number;
  readonly levels: FleetLevel[];
  readonly busy: BusyLatency;
}

export interface SectionResults {
  /** Null when skipped (`--skip history`). */
  readonly history: HistoryResult | null;
  readonly flow: FlowResult | null;
  readonly fleet: FleetResult | null;
}

type Table = (head: string[], rows: string[][]) => string;

const int = (x: number) => Math.round(x).toLocaleString("en-US");
const x2 = (x: number) => `${x.toFixed(2)}x`;
// No samples (a short run that found no room for them) is written to results.json as null.
const ms = (x: number | null) => (x === null || !Number.isFinite(x) ? "-" : x >= 100 ? int(x) : x.toFixed(2));

export const renderSections = (r: SectionResults, table: Table): string[] => {
  const out: string[] = [];
  if (r.history) {
    const h = r.history;
    const met = h.onOverOff >= HISTORY_GOAL;
    out.push("", `Run history on vs off (concurrency ${h.concurrency}, N = ${int(h.n)}, median of ${h.rounds} interleaved rounds)`);
    out.push(
      table(
        ["history", "jobs/s", "history rows per drain", "runs, jobs/s"],
        [
          ...h.rows.map((row) => [row.label, int(row.jobsPerSec), int(row.key === "on" ? h.rowsWrittenOn : h.rowsWrittenOff), row.runsJobsPerSec.map(int).join(" / ")]),
          [`on / off (goal >= ${HISTORY_GOAL}x: ${met ? "met" : "NOT met"})`, x2(h.onOverOff), "", ""],
        ],
      ),
    );
  }
  if (r.flow) {
    const f = r.flow;
    out.push("", `Flow control that does not bind (concurrency ${f.concurrency}, N = ${int(f.n)}, median of ${f.rounds} interleaved rounds)`);
    out.push(table(["limits", "jobs/s", "vs no limits", "runs, jobs/s"], f.rows.map((row) => [row.label, int(row.jobsPerSec), x2(row.vsFirst), row.runsJobsPerSec.map(int).join(" / ")])));
    const c = f.claim;
    out.push("", `Claim of ${c.limit} (one statement) with keyed jobs queued (${c.keys} keys, a concurrency limit each)`);
    out.push(
      table(
        ["keyed jobs queued", "p50 ms", "p95 ms", `vs ${int(c.levels[0]?.queued ?? 0)}`, "samples"],
        c.levels.map((l) => [int(l.queued), l.p50Ms.toFixed(2), l.p95Ms.toFixed(2), x2(l.vsFirst), String(l.samples)]),
      ),
    );
  }
  if (r.fleet) {
    const fl = r.fleet;
    out.push("", `Fleet: ${int(fl.jobs)} jobs of ${fl.jobMs} ms, concurrency ${fl.concurrency} per tick, every tick its own invocation (fan-out and continuations through spawn)`);
    out.push(
      table(
        ["JOBS_MAX_TICKS", "jobs/s", "speed-up vs 1", "ideal", "of ideal jobs/s", "seconds", "invocations (capped)", "peak slots held", "peak handlers"],
        fl.levels.map((l) => [
          String(l.maxTicks),
          int(l.jobsPerSec),
          x2(l.speedup),
          `${l.maxTicks}.00x`,
          `${Math.round(l.ofIdeal * 100)}%`,
          l.seconds.toFixed(1),
          `${l.invocations} (${l.capped})`,
          String(l.peakTicks),
          String(l.peakHandlers),
        ]),
      ),
    );
    const b = fl.busy;
    out.push("", `New jobs while a ${int(b.longJobMs / 1000)} s job keeps a tick busy: enqueue → handler start`);
    out.push(
      table(
        ["enqueue then", "p50 ms", "p95 ms", "p99 ms", "samples"],
        [
          ["jobs.wake() (the running tick claims at once)", ms(b.woken.p50Ms), ms(b.woken.p95Ms), ms(b.woken.p99Ms), String(b.woken.samples)],
          [`nothing (claimed at JOBS_CLAIM_INTERVAL = ${int(b.claimIntervalMs)} ms)`, ms(b.notWoken.p50Ms), ms(b.notWoken.p95Ms), ms(b.notWoken.p99Ms), String(b.notWoken.samples)],
        ],
      ),
    );
    out.push(`${b.claimedByBusyTick} of ${b.probes} new jobs were claimed by the busy tick itself; ${b.kicks} enqueues found no running tick with room and kicked one; ${b.otherTicks} other ticks started.`);
  }
  return out;
};
