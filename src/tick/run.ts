import { safeParse } from "zod/v4/core";
import type { Db } from "../db.js";
import { type AnyJob, type JobContext, jobLogger } from "../job.js";
import { type Logger, logLevel } from "../log.js";
import type { SafeRun } from "../observe/safe.js";
import type { ClaimedRow } from "../store/tick/claim.js";
import { describeIssues, parsePayload } from "../payload.js";
import { errorText } from "../error-text.js";
import { isPermanent } from "../errors.js";
import { LogRing, logLine } from "./run-record.js";

/** What became of one run, before anything is decided about retries. */
export type Outcome =
  | { readonly kind: "succeeded"; readonly output: unknown }
  /** The handler threw, or timed out (`timedOut`: the error is a `JobTimeout`, the handler may still run). */
  | { readonly kind: "failed"; readonly error: unknown; readonly timedOut?: true }
  | { readonly kind: "no_handler" }
  | { readonly kind: "invalid_payload"; readonly issues: unknown };

export class JobTimeout extends Error {
  override readonly name = "JobTimeout";
}

/** Why a run still going at the tick's deadline is aborted (it is requeued). */
export class TickDeadline extends Error {
  override readonly name = "TickDeadline";
}

/** The handler returned something its job's `output` schema refuses: the attempt fails. */
export class OutputMismatch extends Error {
  override readonly name = "OutputMismatch";
}

const SHOWN_ISSUES = 10;

/** A `ctx.log` line, bounded once, to the run's history (when kept) and the process's log: never a failure of the run. */
const logTo = (ring: LogRing | undefined, log: JobContext["log"]): JobContext["log"] => (level, msg, fields) => {
  let bounded: ReturnType<typeof logLine> | undefined;
  try {
    bounded = logLine(logLevel(level), msg, fields);
    ring?.add(bounded);
  } catch {
    // A line that cannot be kept is not kept; the logger still gets it.
  }
  // The handler's own values when nothing was cut (a logger of its own may write an Error's message and stack).
  const line = bounded?.line;
  log(level, ...(line && (line.msg !== msg || line.fields?.fieldsDropped) ? ([line.msg, line.fields] as const) : ([msg, fields] as const)));
};

/** The handler's return value through the job's `output` schema, if it has one. */
const checkOutput = (job: AnyJob, value: unknown): unknown => {
  if (!job.output) return value;
  let parsed: ReturnType<typeof safeParse>;
  try {
    parsed = safeParse(job.output, value);
  } catch (error) {
    // As from a payload schema: a PermanentJobError thrown in it makes the failure permanent.
    throw isPermanent(error) ? error : new OutputMismatch(`the output schema of ${job.name} failed: ${errorText(error)}`);
  }
  if (!parsed.success) {
    // The first few fit in an error text; a value wrong in a million places must not build a message as large.
    const { issues } = parsed.error;
    const more = issues.length > SHOWN_ISSUES ? ` and ${issues.length - SHOWN_ISSUES} more issues` : "";
    throw new OutputMismatch(`the return value does not match the output schema of ${job.name}: ${JSON.stringify(describeIssues(issues.slice(0, SHOWN_ISSUES)))}${more}`);
  }
  return parsed.data;
};

/**
 * One claimed job being run: the executor. Its abort signal is its own (aborted
 * at its timeout or the tick's deadline), not one shared by the tick, so the
 * listeners a handler adds stay with that run; it is made only when the handler
 * reads `ctx.signal`, so a run that never looks costs nothing.
 */
export class Run {
  /** Set at the deadline: the run was requeued, and whatever it does later is fenced out. */
  abandoned = false;
  /** Its handler was called (a claim that came back after the deadline never is: it goes back unstarted). */
  started = false;
  readonly startedAt = Date.now();
  /**
   * Resolves when the handler has returned. For a handler that ignores its
   * timeout that is later than its outcome: it keeps its concurrency slot until then.
   */
  released: Promise<void> | undefined;
  /** The run's `ctx.log` lines for its history row (only when history is recorded). */
  readonly logs: LogRing | undefined;
  /** The observer's view of this run (only with an observer): the handler runs within it. */
  observation: SafeRun | undefined;
  /** What the handler threw (or the timeout), for the observer: settlements keep only its text. */
  error: unknown;
  private controller: AbortController | undefined;
  private reason: unknown;
  constructor(
    readonly row: ClaimedRow,
    readonly owner: string,
    record = false,
  ) {
    this.logs = record ? new LogRing() : undefined;
  }

  abort(reason: unknown): void {
    this.reason ??= reason;
    this.controller?.abort(reason);
  }

  signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason !== undefined) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** When it was abandoned: its duration ends there, for the history and the observer alike (the observer read it after the final statement). */
  private abandonedAt: number | undefined;

  abandon(): void {
    this.abandoned = true;
    this.abandonedAt ??= Date.now();
  }

  elapsed(): number {
    return (this.abandonedAt ?? Date.now()) - this.startedAt;
  }

  /** Runs the handler; never rejects, and never throws (a schema or logger that throws fails the attempt). */
  execute(job: AnyJob | undefined, logger: Logger, db: Db): Promise<Outcome> {
    this.started = true;
    try {
      return this.run(job, logger, db);
    } catch (error) {
      this.error ??= error;
      return Promise.resolve({ kind: "failed", error });
    }
  }

  private run(job: AnyJob | undefined, logger: Logger, db: Db): Promise<Outcome> {
    if (!job) return Promise.resolve({ kind: "no_handler" });
    const parsed = parsePayload(job, this.row.payload);
    if (!parsed.ok && "thrown" in parsed) {
      // A schema that threw (a transform whose lookup failed, say) failed this attempt as a handler that threw
      // does: retried, or permanent if it threw a PermanentJobError. It was a dead letter at once.
      const error = isPermanent(parsed.thrown) ? parsed.thrown : new Error(`the schema failed: ${errorText(parsed.thrown)}`);
      this.error ??= error;
      return Promise.resolve({ kind: "failed", error });
    }
    if (!parsed.ok) return Promise.resolve({ kind: "invalid_payload", issues: parsed.issues });
    const { row } = this;
    const log = jobLogger(logger, { jobId: row.id, jobName: row.job_name, attempt: row.attempt, correlationId: row.correlation_id });
    const ring = this.logs;
    const ctx = new RunContext(this, db, logTo(ring, log));
    const observation = this.observation;
    const call = () => job.handler(parsed.data, ctx);
    const handled = Promise.resolve().then(observation ? () => observation.within(call) : call).then((value) => checkOutput(job, value));
    const outcome = handled.then(
      (output): Outcome => ({ kind: "succeeded", output }),
      (error: unknown): Outcome => ((this.error ??= error), { kind: "failed", error }),
    );
    if (job.timeoutMs === undefined) return outcome;
    this.released = outcome.then(() => undefined);
    const limit = job.timeoutMs;
    return new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => {
        const error = new JobTimeout(`timed out after ${limit} ms`);
        this.error = error;
        this.abort(error);
        resolve({ kind: "failed", error, timedOut: true });
      }, limit);
      // Not what keeps a process alive: a tick that gave the run up (requeued it) has returned, and
      // the timer would hold the process for the rest of the job's timeout.
      (timer as { unref?: () => void }).unref?.();
      void outcome.then((o) => {
        clearTimeout(timer);
        resolve(o);
      });
    });
  }
}

/** What a handler gets; the signal is read through the run, lazily. */
class RunContext implements JobContext {
  readonly jobId: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly correlationId: string | null;
  constructor(
    private readonly run: Run,
    readonly db: Db,
    readonly log: JobContext["log"],
  ) {
    this.jobId = run.row.id;
    this.attempt = run.row.attempt;
    this.maxAttempts = run.row.max_attempts;
    this.correlationId = run.row.correlation_id;
  }
  get signal(): AbortSignal {
    return this.run.signal();
  }
}
