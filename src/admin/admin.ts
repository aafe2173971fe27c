import type { Db } from "../db.js";
import type { FlowSpec } from "../flow/spec.js";
import { JobsError } from "../errors.js";
import type { AnyJob } from "../job.js";
import { discardDeadLetters } from "../store/admin/dead-letter-discard.js";
import { getDeadLetter } from "../store/admin/dead-letter-get.js";
import { listDeadLetters, type ListDeadLettersQuery } from "../store/admin/dead-letters-list.js";
import { readHealth } from "../store/admin/health.js";
import { LATEST_MIGRATION, schemaBehind } from "../migrate.js";
import { cancelJob } from "../store/admin/job-cancel.js";
import { waitingOn } from "../flow/waiting.js";
import { getJob } from "../store/admin/job-get.js";
import { runJobNow } from "../store/admin/job-run-now.js";
import { listJobs, type ListJobsQuery } from "../store/admin/jobs-list.js";
import { replayDeadLetter } from "../store/admin/replay.js";
import { replayAsIs, replayEdit } from "./replay-edit.js";
import { bulkReplay, type BulkReplayResult, type BulkReplaySelector, MAX_BULK_REPLAY, type ReplayRekey } from "../store/admin/replay-bulk.js";
import { rekeyedReplay } from "../store/admin/replay-rekey.js";
import { letterKeys } from "./replay-keys.js";
import { getStats, type Stats } from "../store/admin/stats.js";
import { getSeries, type Series, seriesRange } from "../store/admin/series.js";
import type { DeadLetterSummary, DeadLetterView, JobSummary, JobView } from "../store/admin/views.js";
import type { Page } from "../store/shared/paging.js";
import { onlyKeys } from "../option-keys.js";
import type { Tables } from "../store/shared/tables.js";
import { getRun, runPayload } from "../store/runs/run-get.js";
import { listRuns, type ListRunsQuery } from "../store/runs/runs-list.js";
import type { RunSummary, RunView } from "../store/runs/run-views.js";
import type { EnqueueItem, EnqueueResult } from "../enqueue.js";

export type { ListDeadLettersQuery } from "../store/admin/dead-letters-list.js";
export type { ListJobsQuery } from "../store/admin/jobs-list.js";
export type { ListRunsQuery } from "../store/runs/runs-list.js";

/**
 * What an operator does with the queue, the same calls under the same names as
 * the typed HTTP client: the API routes, the dashboard, the CLI and a user's own
 * pages all go through it. Each call is one statement (an edited replay reads the
 * dead letter first to check the payload against its job's schema). Missing rows
 * are `null` from `get`, `not_found` from the calls that act on one.
 */
export interface QueueAdmin {
  /** Queued and running jobs, newest first, keyset-paginated; rows carry a payload preview. */
  list(query?: ListJobsQuery): Promise<Page<JobSummary>>;
  /**
   * One job: queued, running, dead, or succeeded (from the run history while it keeps it), with its attempts.
   * `{ payload: false }` leaves its payload out (undefined), for a view that refreshes and has it already.
   */
  get(id: string, options?: { payload?: boolean | undefined }): Promise<JobView | null>;
  /** Deletes a queued job. `not_found`, or `conflict` while it runs (its tick owns it). */
  cancel(id: string): Promise<{ id: string; cancelled: true }>;
  /**
   * Makes a queued job due now (delayed, backing off or debounced); one already due keeps its
   * place. `not_found`, or `conflict` while it runs.
   */
  run(id: string): Promise<{ id: string; runAt: string; moved: boolean }>;
  /**
   * Queue depth, oldest wait, dead letters per job, the last hour per minute, the ticks. `minutes: false`
   * leaves the per-minute counts out (`minutes` is empty): they are a row per job and minute.
   */
  stats(options?: { readonly minutes?: boolean | undefined }): Promise<Stats>;
  /**
   * What the dashboard's charts draw over `range` (`1h`, default; `24h`; `7d`): throughput per
   * bucket and job, queue depth and oldest wait, duration percentiles. `invalid_options` for another range.
   */
  series(range?: string): Promise<Series>;
  /** Whether the database answers and when a tick last ran. */
  health(): Promise<{ ok: true; lastTickAt: string | null }>;
  readonly deadLetters: DeadLettersAdmin;
  readonly runs: RunsAdmin;
}

/** The run history: every attempt that ended, with its output, error, stack and logs. */
export interface RunsAdmin {
  /** Newest first, keyset-paginated; filters by job, outcome, job id, correlation id, idempotency key, finishing time. */
  list(query?: ListRunsQuery): Promise<Page<RunSummary>>;
  get(id: string): Promise<RunView | null>;
  /**
   * Enqueues a new job with the run's job name, payload, correlation id, priority and `maxAttempts` (checked
   * against the job's schema like any enqueue). `not_found` when the history no longer has the payload. With
   * `idempotencyKey`, a second call while the first one's job is queued or running returns that job (a double click).
   */
  rerun(id: string, options?: { readonly idempotencyKey?: string | undefined }): Promise<{ id: string; runId: string; deduplicated: boolean }>;
}

export interface DeadLettersAdmin {
  list(query?: ListDeadLettersQuery): Promise<Page<DeadLetterSummary>>;
  get(id: string): Promise<DeadLetterView | null>;
  /**
   * Queues it again, due now, with its own id, attempt 0: as it was, or with `payload` (checked against its job's schema). With `replays`,
   * only the letter as it was seen, replayed that many times before: a second click or a retried request
   * is `not_found`, even where the replayed job failed at once and is a dead letter again.
   */
  replay(id: string, options?: { readonly payload?: unknown; readonly replays?: number | undefined }): Promise<{ id: string; replayed: true }>;
  /** These ids, or the oldest `limit` (default and at most 1,000) matching a job and/or reason, in one statement. */
  replayMany(selector: BulkReplaySelector): Promise<BulkReplayResult>;
  /** Deletes it for good; `not_found` when there is none. */
  discard(id: string): Promise<{ id: string; discarded: true }>;
  /** Deletes these for good, in one statement; says which existed. */
  discardMany(ids: readonly string[]): Promise<{ discarded: string[]; missing: string[] }>;
}

/** How long an admin statement (a read of the API or the dashboard, a replay) may take before it is given up. */
export const ADMIN_STATEMENT_MS = 15_000;

const notFound = (what: string, id: string, hint = "") => new JobsError("not_found", `no ${what} ${id}${hint}`, { id });

export const queueAdmin = (env: {
  readonly db: Db;
  readonly tables: Tables;
  readonly registry: ReadonlyMap<string, AnyJob>;
  readonly maxPayloadBytes: number;
  readonly flow?: FlowSpec;
  /** The library's own enqueue: a rerun is checked like any other job. */
  readonly enqueue: (items: readonly EnqueueItem[]) => Promise<EnqueueResult[]>;
  /** Whether the run history is kept (JOBS_HISTORY_RETENTION is not off): a cancel is recorded there. */
  readonly history?: boolean;
}): QueueAdmin => {
  const { tables: t } = env;
  const rekey: ReplayRekey = {
    jobs: [...(env.flow?.rules.keys() ?? [])],
    keysOf: (job, payload, id) => letterKeys(env.registry, job, payload, id),
  };
  const rateScopes = [...(env.flow?.rules.values() ?? [])].flatMap((r) => r.rates.map((rate) => rate.scope));
  // Every admin statement is bounded, as the tick's are: a stalled database (a lock held for minutes) must
  // not hold an API request or a dashboard page, and its connection, for as long as it lasts.
  const db: Db = { query: (text, params, opts) => env.db.query(text, params, { ...opts, timeoutMs: opts?.timeoutMs ?? ADMIN_STATEMENT_MS }) };
  return {
    list: (query) => listJobs(db, t, query),
    async get(id, options) {
      const found = await getJob(db, t, id, options?.payload ?? true, rateScopes);
      if (!found) return null;
      const { flow, ...job } = found;
      return { ...job, waitingOn: flow ? waitingOn(job.job, flow, env.flow) : null };
    },
    async cancel(id) {
      const outcome = await cancelJob(db, t, id, env.history ?? true);
      if (outcome === "not_found") throw notFound("queued job", id);
      if (outcome === "running") throw new JobsError("conflict", `job ${id} is running; only queued jobs can be cancelled`, { id });
      return { id, cancelled: true };
    },
    async run(id) {
      const outcome = await runJobNow(db, t, id);
      if (outcome.kind === "not_found") throw notFound("queued job", id);
      if (outcome.kind === "running") throw new JobsError("conflict", `job ${id} is running already`, { id });
      return { id, runAt: outcome.runAt, moved: outcome.kind === "moved" };
    },
    async stats(options) {
      const stats = await getStats(db, t, options?.minutes !== false);
      // Buckets are named "c:<job>:<key>"; job names may hold ":" too, so they are matched against the jobs in code.
      const flowRunning = stats.flowRunning.map((b) => {
        // Of the names that fit, one with a concurrency limit, then the longest ("mail" must not take "mail:send"'s buckets).
        const limited = (name: string) => (env.flow?.rules.get(name)?.concurrency !== undefined ? 1 : 0);
        const job = [...env.registry.keys()]
          .filter((name) => b.bucket.startsWith(`c:${name}:`))
          .sort((x, y) => limited(y) - limited(x) || y.length - x.length)[0];
        return job === undefined ? b : { ...b, job, key: b.bucket.slice(job.length + 3), limit: env.flow?.rules.get(job)?.concurrency };
      });
      return { ...stats, flowRunning };
    },
    series: (range) => getSeries(db, t, seriesRange(range)),
    async health() {
      const { lastTickAt, migration, readOnly } = await readHealth(db, t);
      // Tables behind this release are no health: its ticks refuse to run on them.
      if (migration < LATEST_MIGRATION) throw schemaBehind(t.prefix, migration);
      if (readOnly) {
        throw new JobsError("invalid_config", "the database takes no writes (a standby or read replica, or default_transaction_read_only): every tick and enqueue would fail");
      }
      return { ok: true, lastTickAt };
    },
    runs: {
      list: (query) => listRuns(db, t, query),
      get: (id) => getRun(db, t, id),
      async rerun(runId, options = {}) {
        onlyKeys(options, ["idempotencyKey"], "rerun option");
        const run = await getRun(db, t, runId);
        if (!run) throw notFound("run", runId);
        // A run that did not end its job has no payload of its own: the run that ended that life of the job
        // has it, else (that life goes on) the job.
        const payload = run.payload ?? (await runPayload(db, t, run.jobId, runId))?.payload ?? (await getJob(db, t, run.jobId))?.payload ?? null;
        if (payload === null) throw notFound("payload for run", runId, " (the job is gone and the history no longer keeps it)");
        // As the job was enqueued: its priority and attempts too (a rerun of an urgent job went behind the backlog).
        const [done] = await env.enqueue([{
          job: run.job, payload, correlationId: run.correlationId ?? undefined, idempotencyKey: options.idempotencyKey,
          priority: run.priority ?? undefined, maxAttempts: run.maxAttempts ?? undefined,
        }]);
        return { id: done!.id, runId, deduplicated: done!.deduplicated };
      },
    },
    deadLetters: {
      list: (query) => listDeadLetters(db, t, query),
      get: (id) => getDeadLetter(db, t, id),
      async replay(id, options) {
        onlyKeys(options, ["payload", "replays"], "replay option");
        const replays = options?.replays;
        if (replays !== undefined && !(Number.isSafeInteger(replays) && replays >= 0)) {
          throw new JobsError("invalid_options", "replays must be the number of times the letter was replayed (an integer from 0)", { field: "replays" });
        }
        const checked = options && "payload" in options
          ? await replayEdit(db, t, id, options.payload, env.registry, env.maxPayloadBytes)
          : env.flow?.enabled ? await replayAsIs(db, t, id, env.registry) : undefined;
        const done = checked === null ? null : await replayDeadLetter(db, t, id, checked, replays);
        if (!done) throw notFound("dead letter", id, " (it may have been replayed or discarded already)");
        return { id: done.id, replayed: true };
      },
      // With limits in code, the letters' keys are computed again for their replay (see replay-keys.ts).
      replayMany: (selector) => (env.flow?.enabled ? rekeyedReplay(db, t, selector, rekey) : bulkReplay(db, t, selector)),
      async discard(id) {
        if ((await discardDeadLetters(db, t, [id])).length === 0) throw notFound("dead letter", id);
        return { id, discarded: true };
      },
      async discardMany(ids) {
        if (!Array.isArray(ids) || ids.length === 0 || ids.length > MAX_BULK_REPLAY) {
          throw new JobsError("invalid_options", `ids must be a list of 1 to ${MAX_BULK_REPLAY} dead letter ids`, { field: "ids" });
        }
        const gone = new Set(await discardDeadLetters(db, t, ids));
        return { discarded: [...gone], missing: ids.filter((id) => typeof id !== "string" || !gone.has(id.toLowerCase())) };
      },
    },
  };
};
