import { backoffMs } from "./backoff.js";
import { errorStack, errorText } from "../error-text.js";
import { isPermanent } from "../errors.js";
import type { AnyJob } from "../job.js";
import type { Completion } from "../store/tick/complete.js";
import type { DeadLetter, DeadReason } from "../store/tick/dead-letter.js";
import type { Retry } from "../store/tick/retry.js";
import { PLATFORM_REFUSAL } from "../store/tick/claim.js";
import type { Outcome, Run } from "./run.js";
import { recordOutput, type RunHistory } from "./run-record.js";

/** What a finished run asks of the database: one fenced transition. */
export type Settlement =
  | { readonly kind: "complete"; readonly run: Run; readonly item: Completion }
  | { readonly kind: "retry"; readonly run: Run; readonly item: Retry }
  | { readonly kind: "dead"; readonly run: Run; readonly item: DeadLetter };

/** The operation a settlement is, as logs name it. */
export const operation = (s: Settlement): string => (s.kind === "dead" ? "dead-letter" : s.kind);

/** What the history records of a run beside the queue row: its stack, output and logs. */
const historyOf = (run: Run, outcome: Outcome | undefined, maxOutputBytes: number): RunHistory => {
  const output = outcome?.kind === "succeeded" ? recordOutput(outcome.output, maxOutputBytes) : undefined;
  const stack = outcome?.kind === "failed" ? errorStack(outcome.error) : null;
  const bytes = (output?.bytes ?? 0) + (run.logs?.byteSize ?? 0) + 3 * (stack?.length ?? 0);
  return { ...output, stack, logs: run.logs?.toArray(), bytes };
};

/**
 * At most how many bytes a settlement adds to its statement's parameters (UTF-8, before JSON escapes
 * the texts). A batch of runs at the output, log and stack caps is megabytes: see settler.ts.
 */
export const settlementBytes = (s: Settlement): number =>
  SETTLEMENT_FIXED_BYTES + (s.item.history?.bytes ?? 0) + 3 * (s.kind === "complete" ? 0 : s.item.error.length);
const SETTLEMENT_FIXED_BYTES = 300;

/**
 * How long after its enqueue a job no deployment that ticked knows is kept retrying, whatever its
 * attempts: a rolling or gradual deploy leaves ticks of the last release beside the new one, and
 * one of them claiming a job of the new release must not end it (a job of maxAttempts 1 was dead
 * at once). Its claims still count as attempts, so the job that then runs may show more attempts
 * than its maximum; it gets at least one run with a handler before it can end as exhausted.
 */
const NO_HANDLER_GRACE_MS = 15 * 60_000;
/**
 * A run the platform refused what it asked: a Worker's requests past the invocation's subrequest limit
 * (50 on the Free plan) throw this, the tick's own connection and calls among them. Counted as the job's
 * failure, a tick of fetching jobs burned every job's attempts in a second and dead-lettered healthy ones.
 */
const platformRefused = (error: unknown): boolean => {
  try {
    // On Workers only, and the runtime's own words: elsewhere a handler's error that said so would go back for ever.
    return onWorkers() && error instanceof Error && error.message.startsWith(PLATFORM_REFUSAL);
  } catch {
    // An error that throws when read (a hostile Proxy) is read as such further on.
    return false;
  }
};
const onWorkers = () => typeof navigator !== "undefined" && navigator.userAgent === "Cloudflare-Workers";
/** Such a run goes back due after the minute: a later invocation, with requests of its own. */
const PLATFORM_REFUSED_DELAY_MS = 60_000;
/** The longest a job waits between claims by deployments that do not know it. */
const NO_HANDLER_MAX_DELAY_MS = 60_000;

/**
 * Decides what an outcome means for the job: done, another attempt after its
 * backoff, or a dead letter and why. Pure: the caller supplies the randomness.
 * With `maxOutputBytes` (history on), the settlement carries the run's history.
 */
const settlementFor = (
  run: Run,
  job: AnyJob | undefined,
  outcome: Outcome,
  random: () => number,
  maxOutputBytes?: number,
): Settlement => {
  const { row } = run;
  const history = maxOutputBytes === undefined ? undefined : historyOf(run, outcome, maxOutputBytes);
  const base = { id: row.id, owner: run.owner, durationMs: run.elapsed(), ...(history ? { history } : {}) };
  const dead = (reason: DeadReason, error: string): Settlement => ({ kind: "dead", run, item: { ...base, reason, error } });
  const failed = (error: string): Settlement =>
    row.attempt >= row.max_attempts
      ? dead(job ? "exhausted" : "no_handler", error)
      : { kind: "retry", run, item: { ...base, delayMs: backoffMs(row.attempt, job?.backoff, random), error } };
  switch (outcome.kind) {
    case "succeeded":
      return { kind: "complete", run, item: base };
    case "no_handler": {
      const error = `no handler for job ${JSON.stringify(row.job_name)} in this deployment`;
      // Both ends on the database's clock: this deployment's may be off (16 minutes ahead ended the grace at once).
      const waited = row.age_ms + run.elapsed();
      // An unreadable age counts as long ago: the attempts alone then bound the retries.
      if (row.attempt >= row.max_attempts && !(waited < NO_HANDLER_GRACE_MS)) return dead("no_handler", error);
      const delayMs = Math.min(backoffMs(row.attempt, undefined, random), NO_HANDLER_MAX_DELAY_MS);
      return { kind: "retry", run, item: { ...base, delayMs, error } };
    }
    case "invalid_payload": {
      const error = `stored payload does not match the schema of ${row.job_name} in this deployment: ${JSON.stringify(outcome.issues)}`;
      // A job enqueued moments ago by a deployment whose schema takes it (a newer release that added an enum
      // value, say) gets the grace a missing handler gets: an older tick claiming it first lost it at once.
      if (!(row.age_ms + run.elapsed() < NO_HANDLER_GRACE_MS)) return dead("invalid_payload", error);
      // A minute on, past this tick (whose polls claimed it again after a backoff of a second, an attempt each):
      // the tick of the release that takes it is the one to run it.
      return { kind: "retry", run, item: { ...base, delayMs: NO_HANDLER_MAX_DELAY_MS, error } };
    }
    case "failed":
      // Refused twice in a row, it counts: a job that alone needs more than an invocation allows would go back for ever.
      if (!isPermanent(outcome.error) && platformRefused(outcome.error) && !row.refused_before) {
        // Nothing of the job's own failed: back with its attempt, after the invocation (a new one has its own).
        return { kind: "retry", run, item: { ...base, delayMs: PLATFORM_REFUSED_DELAY_MS, error: errorText(outcome.error), returned: true } };
      }
      return isPermanent(outcome.error) ? dead("permanent", errorText(outcome.error)) : failed(errorText(outcome.error));
  }
};

/** `settlementFor` that never throws: what the handler threw or returned cannot stop its run from settling. */
export const settlementOf = (run: Run, job: AnyJob | undefined, outcome: Outcome, random: () => number, maxOutputBytes?: number): Settlement => {
  try {
    return settlementFor(run, job, outcome, random, maxOutputBytes);
  } catch (error) {
    // A fresh error: reading the handler's own one may be what threw.
    const unreadable = new Error(`the run's outcome could not be read: ${errorText(error)}`);
    return settlementFor(run, job, { kind: "failed", error: unreadable }, random, maxOutputBytes);
  }
};

/** A settlement whose texts are replaced by a plain note (and its history left out): the last resort when the database refused the original. */
export const plainSettlement = (s: Settlement, why: string): Settlement => {
  const error = `the error of this attempt could not be stored (${why})`;
  const history: RunHistory = { stack: `the history of this attempt could not be stored (${why})` };
  if (s.kind === "retry") return { ...s, item: { ...s.item, error, history } };
  if (s.kind === "dead") return { ...s, item: { ...s.item, error, history } };
  return { ...s, item: { ...s.item, history } };
};

/**
 * The history row starts when the run did, measured as the statement goes out: a settlement that
 * waited (behind statements out, or past its timeout while its handler ran on) would otherwise show
 * a start as late as its wait, after the handler had returned.
 */
export const settledLate = (s: Settlement, now = Date.now()): Settlement => {
  if (!s.item.history) return s;
  const history: RunHistory = { ...s.item.history, startedAgoMs: now - s.run.startedAt };
  if (s.kind === "retry") return { ...s, item: { ...s.item, history } };
  if (s.kind === "dead") return { ...s, item: { ...s.item, history } };
  return { ...s, item: { ...s.item, history } };
};

export const splitSettlements = (settlements: readonly Settlement[]) => ({
  complete: settlements.flatMap((s) => (s.kind === "complete" ? [s.item] : [])),
  retry: settlements.flatMap((s) => (s.kind === "retry" ? [s.item] : [])),
  deadLetter: settlements.flatMap((s) => (s.kind === "dead" ? [s.item] : [])),
});

/**
 * When the retries a statement wrote come due, from `now` (just after the statement), of jobs this
 * deployment has a handler for: the tick may claim again then.
 */
export const retriesWritten = (
  settlements: readonly Settlement[],
  result: { readonly retried: readonly string[] },
  now: number,
  handled: (jobName: string) => boolean,
): number[] => {
  if (result.retried.length === 0) return [];
  const retried = new Set(result.retried);
  return settlements.flatMap((s) => (s.kind === "retry" && retried.has(s.run.row.id) && handled(s.run.row.job_name) ? [now + s.item.delayMs] : []));
};
