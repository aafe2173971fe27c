import { type JobsSettings, type JobsSettingsInput, resolveSettings } from "./settings/library.js";
import { type Db, fromPg, logConnectionErrors, type PgLike } from "./db.js";
import { errorText } from "./error-text.js";
import { JobsError } from "./errors.js";
import { storedDueNow } from "./due-now.js";
import { enqueueMany, type EnqueueItem, type EnqueueOptions, type EnqueueResult } from "./enqueue.js";
import { type AnyJob, type JobInput, registryOf } from "./job.js";
import { jsonLogger, type Logger, safeLogger } from "./log.js";
import { LATEST_MIGRATION, migrate, schemaBehind, schemaChecked } from "./migrate.js";
import { flowSpec } from "./flow/spec.js";
import type { Observer, WiredObserver } from "./observe/observer.js";
import { type SafeObserver, WIRE } from "./observe/safe.js";
import { ADMIN_STATEMENT_MS, queueAdmin, type QueueAdmin } from "./admin/admin.js";
import { wakeLiveTicks } from "./tick/live.js";
import { tablesFor, type Tables } from "./store/shared/tables.js";
import { runTick } from "./tick/loop.js";
import type { TickExtension, TickOptions, TickReport } from "./tick/types.js";
import { createScheduling, type Schedule, type ScheduleDefinition, type ScheduleOptions, type SchedulesApi } from "./schedules/index.js";

export interface JobsOptions<J extends readonly AnyJob[]> {
  /** A `pg` Pool, a Neon Pool, or any `Db` (see `fromPg`, `fromNeonHttp`). */
  readonly db: Db | PgLike;
  readonly jobs: J;
  readonly settings?: JobsSettingsInput | JobsSettings | undefined;
  readonly logger?: Logger | undefined;
  /** Randomness for backoff jitter; tests pass a fixed one. */
  readonly random?: (() => number) | undefined;
  /** Features that ride on every tick (see `TickExtension`). */
  readonly extensions?: readonly TickExtension[] | undefined;
  /**
   * Recurring jobs (see `defineSchedule`), validated here against the jobs. When given (even
   * `[]`), every tick syncs the schedules table to this list and enqueues due occurrences.
   */
  readonly schedules?: readonly (Schedule | ScheduleDefinition)[] | undefined;
  readonly scheduleOptions?: ScheduleOptions | undefined;
  /**
   * Sees ticks, runs and enqueues: `openTelemetry()` from `pgtick/otel` or `defineObserver(hooks)`
   * makes spans and metrics of them. A hook that throws is logged once and never fails the queue.
   */
  readonly observer?: WiredObserver | undefined;
}

/** Per-call options that let an enqueue join the caller's own transaction. */
export interface WithDb {
  /** A client inside the caller's transaction: the job exists only if that transaction commits. */
  readonly db?: Db | PgLike;
}

export type TypedEnqueueItem<J extends AnyJob> = {
  [N in J["name"]]: EnqueueOptions & { readonly job: N; readonly payload: JobInput<J, N> };
}[J["name"]];

/** Whether `N` is a union of names (true) or one name (false). */
type Several<N, All = N> = N extends unknown ? ([All] extends [N] ? false : true) : never;
/**
 * The payload of job `N`, where `N` is one name. For a union of names (a variable typed `"a" | "b"`) it
 * would be the union of their payloads, taking `b`'s payload for `a`: never here, so that such a call
 * falls to the per-name overload, which refuses it.
 */
export type OnePayload<J extends AnyJob, N extends string> = Several<N> extends false ? JobInput<J, N> : never;

/** One item of `enqueueMany` naming job `N`. */
export type EnqueueItemFor<J extends AnyJob, N extends string> = EnqueueOptions & { readonly job: N; readonly payload: OnePayload<J, N> };

/**
 * The arguments of `enqueue`, one tuple per job name. A union of tuples (rather
 * than a generic method) keeps a typed `Jobs` assignable to `Jobs<readonly AnyJob[]>`.
 */
export type EnqueueArgs<J extends AnyJob> = {
  [N in J["name"]]: [job: N, payload: JobInput<J, N>, options?: EnqueueOptions & WithDb];
}[J["name"]];

/**
 * A queue: enqueue and tick (the hot path), and the admin surface (`QueueAdmin`:
 * list, get, cancel, stats, health, dead letters; schedules), the same calls under
 * the same names as the typed HTTP client.
 */
export interface Jobs<J extends readonly AnyJob[]> extends QueueAdmin {
  readonly settings: JobsSettings;
  readonly tables: Tables;
  readonly registry: ReadonlyMap<string, AnyJob>;
  readonly db: Db;
  readonly logger: Logger;
  /** Applies pending migrations (safe to call from many processes at once); with `timeoutMs`, a statement the database does not answer within it is given up (nothing applied). */
  migrate(options?: { readonly timeoutMs?: number | undefined }): Promise<number[]>;
  /** Validates and enqueues one job. Throws `JobsError` (`unknown_job`, `invalid_payload`, ...) and writes nothing when the input is bad. */
  enqueue<N extends J[number]["name"]>(job: N, payload: OnePayload<J[number], N>, options?: EnqueueOptions & WithDb): Promise<EnqueueResult>;
  enqueue(...args: EnqueueArgs<J[number]>): Promise<EnqueueResult>;
  /** Validates every item, then enqueues all in one statement; nothing is written if any item is bad. */
  enqueueMany<const N extends readonly J[number]["name"][]>(items: { readonly [K in keyof N]: EnqueueItemFor<J[number], N[K] & string> }, options?: WithDb): Promise<EnqueueResult[]>;
  enqueueMany(items: ReadonlyArray<TypedEnqueueItem<J[number]>>, options?: WithDb): Promise<EnqueueResult[]>;
  /** Untyped enqueue for input from outside (HTTP, CLI): the same validation, names checked at run time. */
  enqueueUnchecked(items: readonly EnqueueItem[], options?: WithDb & { batch?: boolean }): Promise<EnqueueResult[]>;
  /** One dispatcher invocation: what a platform cron calls every minute. */
  tick(options?: TickOptions): Promise<TickReport>;
  /**
   * Wakes the ticks of this queue running in this process, so they claim work
   * that just became due; true when one of them has free slots (no new tick needed).
   */
  wake(): boolean;
  /** List, pause, resume and run for the schedules passed to createJobs. */
  readonly schedules: SchedulesApi;
}

/**
 * The observer as the queue calls it, wired by what made it (`defineObserver`, `openTelemetry()`): that code
 * comes with the observer, so a bundle without one carries none of it.
 */
const wired = (observer: Observer, logger: Logger): SafeObserver => {
  const wire = (observer as { [WIRE]?: unknown })[WIRE];
  if (typeof wire !== "function") {
    throw new JobsError("invalid_config", "an observer must come from openTelemetry() or defineObserver(hooks) (both from pgtick): a plain object of hooks is not wired");
  }
  return wire(logger) as SafeObserver;
};

/** A queue whose job names are only known at run time (the HTTP API, the CLI, the dashboard). */
export type AnyJobs = Jobs<readonly AnyJob[]>;

const asDb = (db: Db | PgLike): Db => fromPg(db);

export const createJobs = <const J extends readonly AnyJob[]>(options: JobsOptions<J>): Jobs<J> => {
  const settings = resolveSettings(options.settings);
  const tables = tablesFor(settings.tablePrefix);
  const registry = registryOf(options.jobs);
  const flow = flowSpec(registry);
  const logger = safeLogger(options.logger ?? jsonLogger());
  // An idle connection that dies must not end the process (a pg Pool without an `error` listener does).
  logConnectionErrors((options.db as Partial<Db>).driver ?? options.db, (error) => logger.log("warn", "idle database connection failed", { error: errorText(error) }));
  const given = asDb(options.db);
  const db = schemaChecked(given, tables.prefix);
  const observer = options.observer ? wired(options.observer, logger) : undefined;
  // A migration that only rewrote a function fails no statement: the tick checks where the tables are.
  const schema = { needs: LATEST_MIGRATION, behind: (at: number) => schemaBehind(tables.prefix, at) };
  const scheduling = createScheduling({
    schedules: options.schedules, options: options.scheduleOptions, registry, settings, db, tables, logger, traceparent: observer?.traceparent,
  });
  const extensions = [...(options.extensions ?? []), ...(scheduling.extension ? [scheduling.extension] : [])];
  // An enqueue on the queue's own connections is bounded as an admin call is (a request must not wait
  // for ever on a locked or frozen database); one on the caller's client is the caller's to bound.
  const enqueueDb: Db = { statementsAtOnce: db.statementsAtOnce, query: (text, params, o) => db.query(text, params, { ...o, timeoutMs: o?.timeoutMs ?? ADMIN_STATEMENT_MS }) };
  const enqueueUnchecked = async (items: readonly EnqueueItem[], opts: WithDb & { batch?: boolean } = {}) => {
    const results = await enqueueMany(opts.db ? schemaChecked(asDb(opts.db), tables.prefix) : enqueueDb, tables, registry, settings, items, opts.batch ?? true, observer?.traceparent);
    // A job due now wakes the ticks running in this process (a handler enqueueing its successor): they
    // claim it at once, where they would have ended or claimed at their interval. A map lookup when none runs.
    if (storedDueNow(items, results)) wakeLiveTicks(tables.prefix);
    return results;
  };
  return {
    ...queueAdmin({
      // One job at a time (a rerun): its errors carry no batch index.
      db, tables, registry, maxPayloadBytes: settings.maxPayloadBytes, flow, enqueue: (items) => enqueueUnchecked(items, { batch: items.length > 1 }),
      history: settings.historyRetentionMs !== false,
    }),
    settings,
    tables,
    registry,
    db,
    logger,
    migrate: (options) => migrate(db, settings.tablePrefix, undefined, undefined, options?.timeoutMs),
    async enqueue(job: string, payload: unknown, opts?: EnqueueOptions & WithDb) {
      const { db: client, ...rest } = opts ?? {};
      const [result] = await enqueueUnchecked([{ ...rest, job, payload }], { db: client, batch: false });
      return result!;
    },
    enqueueMany: (items: readonly unknown[], opts: WithDb = {}) => enqueueUnchecked(items as readonly EnqueueItem[], opts),
    enqueueUnchecked,
    tick: (tickOptions) =>
      runTick({ db, handlerDb: given, schema, tables, registry, settings, logger, random: options.random, extensions, flow, observer }, tickOptions),
    wake: () => wakeLiveTicks(tables.prefix),
    schedules: scheduling.api,
  };
};
