import type { Logger } from "../log.js";
import { type CutShort, requeueErrors } from "../store/tick/requeue.js";
import type { StepResult } from "../store/tick/step.js";
import type { Run } from "./run.js";
import { operation, type Settlement } from "./settlement.js";

const fields = (run: Run) => ({
  jobId: run.row.id, jobName: run.row.job_name, attempt: run.row.attempt, correlationId: run.row.correlation_id,
});

/**
 * One log line per job a step touched (what it became, or `lease lost` for a
 * write the fence refused), from the step's per-id results.
 */
export const logStep = (logger: Logger, settlements: readonly Settlement[], requeue: readonly Run[], result: StepResult, why?: CutShort): void => {
  const applied = new Set([...result.completed, ...result.retried, ...result.deadLettered, ...result.requeued, ...result.requeueExhausted]);
  for (const s of settlements) {
    const f = { ...fields(s.run), durationMs: s.item.durationMs };
    if (!applied.has(s.item.id)) logger.log("warn", "lease lost", { ...f, operation: operation(s), outcome: "lease_lost" });
    else if (s.kind === "complete") logger.log("info", "job succeeded", { ...f, outcome: "succeeded" });
    else if (s.kind === "retry") logger.log("warn", "job failed, will retry", { ...f, outcome: "retried", error: s.item.error, retryInMs: s.item.delayMs });
    else logger.log("error", "job dead-lettered", { ...f, outcome: "dead_lettered", reason: s.item.reason, error: s.item.error });
  }
  const byId = new Map(requeue.map((r) => [r.row.id, r]));
  for (const r of requeue) if (!applied.has(r.row.id)) logger.log("warn", "lease lost", { ...fields(r), operation: "requeue", outcome: "lease_lost" });
  for (const id of result.requeued) {
    const run = byId.get(id)!;
    // A claim that came back after the deadline never ran: no alert.
    // A stop on purpose (a Ctrl-C, a shutdown) is no failure: its runs go back with their attempts.
    const f = { ...fields(run), durationMs: run.elapsed(), outcome: "requeued" };
    if (run.started && why === "stopped") logger.log("warn", "job requeued: the tick was stopped", f);
    else if (run.started) logger.log("error", "job requeued at the deadline", f);
    else logger.log("debug", "claimed after the deadline: back to the queue unstarted", fields(run));
  }
  for (const id of result.requeueExhausted) {
    const run = byId.get(id)!;
    logger.log("error", "job dead-lettered", { ...fields(run), durationMs: run.elapsed(), outcome: "dead_lettered", reason: "deadline", error: requeueErrors(why ?? "deadline").dead });
  }
  const names = result.reclaimedNames;
  for (const id of result.reclaimed) logger.log("warn", "expired lease reclaimed", { jobId: id, jobName: names[id], outcome: "reclaimed" });
  for (const id of result.reclaimExhausted) logger.log("error", "job dead-lettered", { jobId: id, jobName: names[id], outcome: "dead_lettered", reason: "lease_expired" });
};
