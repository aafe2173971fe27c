import type { StepResult } from "../store/tick/step.js";
import type { Run } from "../tick/run.js";
import type { Settlement } from "../tick/settlement.js";
import type { TickReport } from "../tick/types.js";
import type { RunEnd } from "./observer.js";
import type { SafeRun, SafeTick } from "./safe.js";

/** What the loop tells the observer: runs as they start, what each statement made of them, the end. */
export interface TickWatch {
  start(run: Run): void;
  applied(settlements: readonly Settlement[], requeue: readonly Run[], result: StepResult): void;
  end(report: TickReport | undefined, error?: unknown): void;
}

const settledEnd = (s: Settlement, result: StepResult): RunEnd => {
  const { durationMs } = s.item;
  const has = (ids: readonly string[]) => ids.includes(s.item.id);
  if (s.kind === "complete") return has(result.completed) ? { outcome: "succeeded", durationMs } : { outcome: "lease_lost", durationMs };
  const error = s.run.error ?? s.item.error;
  if (s.kind === "retry") return { outcome: has(result.retried) ? "retried" : "lease_lost", durationMs, error };
  return has(result.deadLettered) ? { outcome: "dead_lettered", durationMs, error, reason: s.item.reason } : { outcome: "lease_lost", durationMs, error };
};

const requeuedEnd = (run: Run, result: StepResult): RunEnd => {
  const durationMs = run.elapsed();
  const id = run.row.id;
  if (result.requeued.includes(id)) return { outcome: "requeued", durationMs };
  if (result.requeueExhausted.includes(id)) return { outcome: "dead_lettered", durationMs, reason: "deadline" };
  return { outcome: "lease_lost", durationMs };
};

const watchTick = (tick: SafeTick): TickWatch => {
  const open = new Map<Run, SafeRun>();
  const close = (run: Run, end: () => RunEnd) => {
    const observation = open.get(run);
    if (!observation) return;
    open.delete(run);
    observation.end(end());
  };
  return {
    start(run) {
      const { row } = run;
      const observation = tick.run({
        jobId: row.id, jobName: row.job_name, attempt: row.attempt, maxAttempts: row.max_attempts,
        correlationId: row.correlation_id, traceparent: row.traceparent ?? null,
      });
      if (!observation) return;
      open.set(run, observation);
      run.observation = observation;
    },
    applied(settlements, requeue, result) {
      const names = result.reclaimedNames;
      const reclaimed = [...result.reclaimed.map((id) => ({ jobId: id, jobName: names[id] ?? "", deadLettered: false })),
        ...result.reclaimExhausted.map((id) => ({ jobId: id, jobName: names[id] ?? "", deadLettered: true }))];
      if (reclaimed.length > 0) tick.reclaimed(reclaimed);
      if (open.size === 0) return;
      for (const s of settlements) close(s.run, () => settledEnd(s, result));
      for (const run of requeue) close(run, () => requeuedEnd(run, result));
    },
    end(report, error) {
      // Runs no statement settled (it failed): their leases expire and other ticks reclaim them.
      for (const [run, observation] of open) observation.end({ outcome: "lease_lost", durationMs: run.elapsed(), error: error ?? run.error });
      open.clear();
      tick.end(report, error);
    },
  };
};

/**
 * Runs a tick's loop within the tick's observation, which ends with the report or the error; the loop
 * is given the watch it tells of its runs. (Without an observer the tick runs its loop bare.)
 */
export const watchedTick = async (tick: SafeTick, loop: (watch: TickWatch) => Promise<TickReport>): Promise<TickReport> => {
  const watch = watchTick(tick);
  try {
    return await tick.within(() => loop(watch));
  } catch (error) {
    // The loop ends its watch itself, with its report, when it can; this is for anything else that threw.
    watch.end(undefined, error);
    throw error;
  }
};
