import { backoffMs } from "./backoff.js";
import type { JobsSettings } from "./config.js";
import type { Db } from "./db.js";
import { isPermanent } from "./errors.js";
import { type AnyJob, type JobContext, jobLogger } from "./job.js";
import type { Logger } from "./log.js";
import type { ClaimedRow } from "./store/claim.js";
import type { Completion } from "./store/complete.js";
import type { DeadLetter, DeadReason } from "./store/dead-letter.js";
import type { Requeue } from "./store/requeue.js";
import type { Retry } from "./store/retry.js";
import { runStep, type StepInput, type StepResult, type TickCounts } from "./store/step.js";
import type { Tables } from "./store/tables.js";
import { parsePayload } from "./validate.js";

export interface TickOptions {
  /** How long this tick may run handlers. Default: the `tickBudgetMs` setting. */
  readonly budgetMs?: number;
  /** Handlers at once. Default: the `concurrency` setting. */
  readonly concurrency?: number;
  /** Rows per claim statement (never more than the free slots). Default: the `batchSize` setting. */
  readonly batchSize?: number;
  /** Stop claiming this long before the deadline. Default: the `claimCutoffMs` setting, at most half the budget. */
  readonly claimCutoffMs?: number;
  /** Ends the tick early, as if its deadline had come (a platform shutdown, Ctrl-C). */
  readonly signal?: AbortSignal;
}

export interface TickReport extends TickCounts {
  readonly startedAt: string;
  readonly durationMs: number;
  /** Ids of the runs the deadline cut short and returned to the queue (not those that became dead letters). */
  readonly requeuedIds: readonly string[];
  /** Statements this tick sent. */
  readonly statements: number;
}

/**
 * A feature that rides on the tick (cron schedules do): it adds columns to the
 * tick's first statement, so an idle tick stays one statement, and acts only
 * when those values say there is work.
 */
export interface TickExtension {
  probe(t: Tables): string[];
  /** Returns how many jobs it enqueued, so the tick knows to claim again. */
  afterProbe(values: Record<string, unknown>, tick: { db: Db; tables: Tables; logger: Logger }): Promise<number>;
}

export interface TickEnv {
  readonly extensions?: readonly TickExtension[];
  readonly db: Db;
  readonly tables: Tables;
  readonly registry: ReadonlyMap<string, AnyJob>;
  readonly settings: JobsSettings;
  readonly logger: Logger;
  readonly random?: () => number;
}

type Settlement =
  | { kind: "complete"; item: Completion }
  | { kind: "retry"; item: Retry }
  | { kind: "dead"; item: DeadLetter };

/**
 * One claimed job being run. Its abort signal is its own (aborted at its timeout or the
 * tick's deadline), not one shared by the tick, so the listeners a handler adds (fetch,
 * timers) stay with that run; it is made only when the handler reads `ctx.signal`, so a
 * run that never looks costs nothing. A class, so a run costs no closures either.
 */
class Run {
  /** Set at the deadline: the run was requeued, and whatever it does later is fenced out. */
  abandoned = false;
  readonly startedAt = Date.now();
  private controller: AbortController | undefined;
  private reason: unknown;
  constructor(
    readonly row: ClaimedRow,
    readonly owner: string,
  ) {}
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
}

/** What a handler gets; the signal is read through the run, lazily. */
class RunContext implements JobContext {
  readonly jobId: string;
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly correlationId: string | null;
  constructor(
    private readonly run: Run,
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

const RECLAIM_LIMIT = 1_000;

class TickDeadline extends Error {
  override readonly name = "TickDeadline";
}
class JobTimeout extends Error {
  override readonly name = "JobTimeout";
}

const errorText = (e: unknown): string =>
  e instanceof Error ? (e.name && e.name !== "Error" ? `${e.name}: ${e.message}` : e.message) : String(e);

/**
 * One invocation of the dispatcher: claim due jobs up to the free concurrency,
 * run them, settle them in batches, and before the budget runs out requeue
 * whatever is still running. Every write after the claim is fenced on the
 * claim's lease token, in the statement itself.
 */
export const runTick = async (env: TickEnv, options: TickOptions = {}): Promise<TickReport> => {
  const { db, tables, registry, settings, logger } = env;
  const random = env.random ?? Math.random;
  // A timer cannot wait past 2^31 - 1 ms (it would fire at once), so neither can a tick.
  const budgetMs = Math.min(options.budgetMs ?? settings.tickBudgetMs, 2_147_483_647);
  const concurrency = Math.max(1, options.concurrency ?? settings.concurrency);
  const batchSize = Math.max(1, Math.min(options.batchSize ?? settings.batchSize ?? concurrency, concurrency));
  const started = Date.now();
  const deadline = started + budgetMs;
  const cutoff = deadline - Math.min(options.claimCutoffMs ?? settings.claimCutoffMs, budgetMs / 2);

  const counts: TickCounts = { claimed: 0, succeeded: 0, retried: 0, deadLettered: 0, requeued: 0, leaseLost: 0, reclaimed: 0 };
  const running = new Map<string, Run>();
  // Runs past their own timeout whose handlers have not returned yet: settled, but they still hold a slot,
  // so a handler that ignores its signal cannot push the tick past its concurrency.
  let overtime = 0;
  let pending: Settlement[] = [];
  let statements = 0;
  let stopped = false;

  // One waiter at a time: the loop sleeps until a run finishes or the deadline comes.
  let wake: (() => void) | undefined;
  const signalWake = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const sleep = () => new Promise<void>((resolve) => (wake = resolve));
  const stop = () => {
    stopped = true;
    signalWake();
  };
  const timer = setTimeout(stop, Math.max(0, budgetMs));
  options.signal?.addEventListener("abort", stop, { once: true });
  if (options.signal?.aborted) stopped = true;

  const step = async (input: StepInput): Promise<StepResult> => {
    statements++;
    return runStep(db, tables, input);
  };
  const counted: Db = { query: (text, params, opts) => (statements++, db.query(text, params, opts)) };
  const extensions = env.extensions ?? [];

  const start = (row: ClaimedRow, owner: string) => {
    const run = new Run(row, owner);
    running.set(row.id, run);
    void execute(run)
      // execute() catches what handlers throw; this is for a fault of our own, so a run never hangs unsettled.
      .catch((error: unknown): Settlement => ({
        kind: "retry",
        item: { id: row.id, owner, durationMs: Date.now() - run.startedAt, delayMs: backoffMs(row.attempt, undefined, random), error: errorText(error) },
      }))
      .then((settlement) => {
      if (run.abandoned) return void settleLate(run, settlement);
      running.delete(row.id);
      pending.push(settlement);
      signalWake();
    });
  };

  const execute = async (run: Run): Promise<Settlement> => {
    const { row, owner } = run;
    const job = registry.get(row.job_name);
    const base = { id: row.id, owner };
    const elapsed = () => Date.now() - run.startedAt;
    const dead = (reason: DeadReason, error: string): Settlement => ({ kind: "dead", item: { ...base, durationMs: elapsed(), reason, error } });
    const failed = (error: string, options = job?.backoff): Settlement =>
      row.attempt >= row.max_attempts
        ? dead(job ? "exhausted" : "no_handler", error)
        : { kind: "retry", item: { ...base, durationMs: elapsed(), delayMs: backoffMs(row.attempt, options, random), error } };

    if (!job) return failed(`no handler for job "${row.job_name}" in this deployment`);
    const parsed = parsePayload(job, row.payload);
    if (!parsed.ok) {
      return dead("invalid_payload", `stored payload no longer matches the schema of ${job.name}: ${JSON.stringify(parsed.issues)}`);
    }
    const ctx = new RunContext(run, jobLogger(logger, { jobId: row.id, jobName: row.job_name, attempt: row.attempt, correlationId: row.correlation_id }));
    let timeout: ReturnType<typeof setTimeout> | undefined;
    try {
      if (job.timeoutMs === undefined) {
        await job.handler(parsed.data, ctx);
      } else {
        const timedOut = new Promise<never>((_, reject) => {
          timeout = setTimeout(() => {
            const error = new JobTimeout(`timed out after ${job.timeoutMs} ms`);
            run.abort(error);
            reject(error);
          }, job.timeoutMs);
        });
        const handled = Promise.resolve().then(() => job.handler(parsed.data, ctx));
        await Promise.race([handled, timedOut]).catch((error: unknown) => {
          if (error instanceof JobTimeout) {
            overtime++;
            void handled.catch(() => undefined).finally(() => {
              overtime--;
              signalWake();
            });
          }
          throw error;
        });
      }
      return { kind: "complete", item: { ...base, durationMs: elapsed() } };
    } catch (error) {
      if (isPermanent(error)) return dead("permanent", errorText(error));
      return failed(errorText(error));
    } finally {
      clearTimeout(timeout);
    }
  };

  const split = (settlements: Settlement[]) => ({
    complete: settlements.flatMap((s) => (s.kind === "complete" ? [s.item] : [])),
    retry: settlements.flatMap((s) => (s.kind === "retry" ? [s.item] : [])),
    deadLetter: settlements.flatMap((s) => (s.kind === "dead" ? [s.item] : [])),
  });

  // What log lines say about each job this tick holds; dropped once the job is settled, so a long drain holds no payloads.
  const claimedJobs = new Map<string, { jobName: string; attempt: number; correlationId: string | null }>();
  const jobFields = (id: string) => ({ jobId: id, jobName: undefined, attempt: undefined, correlationId: null, ...claimedJobs.get(id) });

  /** Logs each settled job, and `lease lost` for each write the fence refused. */
  const account = (settled: Settlement[], requeue: Requeue[], result: StepResult) => {
    const ok = new Set([...result.completed, ...result.retried, ...result.deadLettered, ...result.requeued, ...result.requeueExhausted]);
    for (const s of settled) {
      const f = { ...jobFields(s.item.id), durationMs: s.item.durationMs };
      claimedJobs.delete(s.item.id);
      if (!ok.has(s.item.id)) {
        counts.leaseLost++;
        logger.log("warn", "lease lost", { ...f, operation: s.kind === "dead" ? "dead-letter" : s.kind });
      } else if (s.kind === "complete") logger.log("info", "job succeeded", { ...f, outcome: "succeeded" });
      else if (s.kind === "retry") logger.log("warn", "job failed, will retry", { ...f, outcome: "retried", error: s.item.error, retryInMs: s.item.delayMs });
      else logger.log("error", "job dead-lettered", { ...f, outcome: "dead_lettered", reason: s.item.reason, error: s.item.error });
    }
    for (const r of requeue) if (!ok.has(r.id)) {
      counts.leaseLost++;
      logger.log("warn", "lease lost", { ...jobFields(r.id), operation: "requeue" });
    }
    for (const id of result.requeueExhausted) logger.log("error", "job dead-lettered", { ...jobFields(id), outcome: "dead_lettered", reason: "deadline" });
    for (const id of result.reclaimed) logger.log("warn", "expired lease reclaimed", { jobId: id, outcome: "reclaimed" });
    for (const id of result.reclaimExhausted) logger.log("error", "job dead-lettered", { jobId: id, outcome: "dead_lettered", reason: "lease_expired" });
    counts.succeeded += result.completed.length;
    counts.retried += result.retried.length;
    counts.deadLettered += result.deadLettered.length + result.requeueExhausted.length + result.reclaimExhausted.length;
    counts.requeued += result.requeued.length;
    counts.reclaimed += result.reclaimed.length + result.reclaimExhausted.length;
  };

  // Late writes wait for the deadline's requeue, so the fence (not a race) decides them.
  let finalWritten!: () => void;
  const afterFinal = new Promise<void>((resolve) => (finalWritten = resolve));

  /** A run that outlived the tick: its write goes through the same fence, which refuses it. */
  const settleLate = async (run: Run, settlement: Settlement) => {
    await afterFinal;
    try {
      const result = await runStep(db, tables, split([settlement]));
      const ok = [...result.completed, ...result.retried, ...result.deadLettered].includes(run.row.id);
      logger.log(ok ? "info" : "warn", ok ? "late settlement applied" : "lease lost", {
        jobId: run.row.id, jobName: run.row.job_name, attempt: run.row.attempt, operation: settlement.kind === "dead" ? "dead-letter" : settlement.kind, late: true,
      });
    } catch (error) {
      logger.log("warn", "late settlement not written", { jobId: run.row.id, error: errorText(error) });
    }
  };

  let first = true;
  let queueEmpty = false;
  // A failed statement ends the loop; the tick still requeues what it holds, then rethrows.
  let failure: { error: unknown } | undefined;
  try {
    for (;;) {
      if (stopped || Date.now() >= deadline) break;
      const free = concurrency - running.size - overtime;
      const want: number = Date.now() < cutoff && !queueEmpty ? Math.min(batchSize, free) : 0;
      if (first || pending.length > 0 || want > 0) {
        const settled = pending;
        pending = [];
        const owner = crypto.randomUUID();
        const leaseMs = Math.max(settings.leaseMs, deadline - Date.now() + settings.leaseMarginMs);
        let result: StepResult;
        try {
          result = await step({
            ...split(settled),
            claim: want > 0 ? { limit: want, owner, leaseMs } : undefined,
            reclaim: first ? { limit: RECLAIM_LIMIT } : undefined,
            markTick: first,
            probe: first ? extensions.flatMap((e) => e.probe(tables)) : undefined,
          });
        } catch (error) {
          // The statement is atomic: none of it happened, so its settlements are still owed.
          pending = [...settled, ...pending];
          failure = { error };
          logger.log("error", "tick statement failed", { error: errorText(error) });
          break;
        }
        account(settled, [], result);
        queueEmpty = want > 0 && result.claimed.length < want && result.reclaimed.length === 0;
        counts.claimed += result.claimed.length;
        for (const row of result.claimed) {
          claimedJobs.set(row.id, { jobName: row.job_name, attempt: row.attempt, correlationId: row.correlation_id });
          start(row, owner);
        }
        if (first) {
          first = false;
          for (const extension of extensions) {
            try {
              const enqueued = await extension.afterProbe(result.probe, { db: counted, tables, logger });
              if (enqueued > 0) queueEmpty = false;
            } catch (error) {
              // A broken extension (a schedule) must not stop the queue from draining.
              logger.log("error", "tick extension failed", { error: errorText(error) });
            }
          }
        }
        continue;
      }
      // Done when nothing runs, unless overtime handlers block slots that queued work is waiting for.
      if (running.size === 0 && (overtime === 0 || queueEmpty)) break;
      await sleep();
      // Let runs that finished together settle in one statement.
      await new Promise((resolve) => setImmediate(resolve));
      queueEmpty = false;
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stop);
  }

  // The deadline (or the end of work): one statement settles what finished, requeues
  // what is still running, and records the report.
  const abandoned = [...running.values()];
  for (const run of abandoned) {
    run.abandoned = true;
    run.abort(new TickDeadline("the tick's deadline came before the run finished"));
  }
  if (abandoned.length > 0) {
    logger.log("error", "tick deadline: requeueing running jobs", {
      jobIds: abandoned.map((r) => r.row.id),
      count: abandoned.length,
    });
  }
  const requeue: Requeue[] = abandoned.map((r) => ({ id: r.row.id, owner: r.owner, durationMs: Date.now() - r.startedAt }));
  const settled = pending;
  pending = [];
  const busy = counts.claimed + counts.reclaimed + settled.length + requeue.length > 0;
  let requeuedIds: string[] = [];
  try {
    if (busy) {
      const result = await step({
        ...split(settled),
        requeue,
        report: { before: { ...counts }, startedAt: new Date(started).toISOString(), durationMs: Date.now() - started },
      });
      account(settled, requeue, result);
      requeuedIds = result.requeued;
      for (const id of result.requeued) logger.log("error", "job requeued at the deadline", { ...jobFields(id), outcome: "requeued" });
    }
  } finally {
    finalWritten();
  }
  const report: TickReport = {
    ...counts,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    requeuedIds,
    statements,
  };
  logger.log(busy ? "info" : "debug", "tick finished", { ...report, requeuedIds: undefined });
  if (failure) throw failure.error;
  return report;
};
