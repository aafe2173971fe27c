import type { JobsSettings } from "../settings/library.js";
import type { Db } from "../db.js";
import { isJobsError, JobsError } from "../errors.js";
import { newJobId } from "../ids.js";
import { onlyKeys } from "../option-keys.js";
import { keyText } from "../payload.js";
import type { AnyJob } from "../job.js";
import type { Logger } from "../log.js";
import { materializeOccurrences, type Advance } from "../store/schedules/materialize.js";
import { setSchedulePaused } from "../store/schedules/pause.js";
import { DUE_LIMIT, PROBE_COLUMNS, readDueSchedules, scheduleProbeColumns, type DueScheduleRow } from "../store/schedules/probe.js";
import { enqueueRunNow } from "../store/schedules/run-now.js";
import type { ScheduleRowInput } from "../store/schedules/row-insert.js";
import { readScheduleHeads, writeScheduleSync, type SyncWrite } from "../store/schedules/sync.js";
import { databaseNowMs } from "../store/schedules/database-now.js";
import type { Page } from "../store/shared/paging.js";
import type { Tables } from "../store/shared/tables.js";
import type { TickExtension } from "../tick/types.js";
import type { Schedule, ScheduleDefinition } from "./define.js";
import { type ListSchedulesQuery, listSchedulePage, scheduleInfo, type ScheduleInfo } from "./listing.js";
import { type Prepared, prepare } from "./prepared.js";

export type { ListSchedulesQuery, ScheduleInfo } from "./listing.js";
import { definitionHash, setHash } from "./hash.js";
import { DEFAULT_GRACE_MS, planOccurrences } from "./plan.js";

export interface ScheduleOptions {
  /** The clock schedules use instead of the database's now(); for tests of DST and outage arithmetic. */
  readonly now?: () => Date;
  /** How late an occurrence may be seen and still run under the "skip" policy. Default 5 minutes. */
  readonly graceMs?: number;
}

export interface SchedulesApi {
  /** Schedules defined in this deployment's code, by name, a page at a time, with their stored state. */
  list(query?: ListSchedulesQuery): Promise<Page<ScheduleInfo>>;
  /** Stops enqueueing occurrences; the definition stays. `not_found` for a name not defined in code. */
  pause(name: string): Promise<ScheduleInfo>;
  /** Restarts from the first occurrence after now (occurrences passed while paused are not run). */
  resume(name: string): Promise<ScheduleInfo>;
  /**
   * Enqueues one job of the schedule at once, paused or not; occurrences are unaffected. With an
   * `idempotencyKey` (a form's token), a second call while that job is queued or running enqueues nothing
   * and returns it (`deduplicated`), as an enqueue's key does.
   */
  run(name: string, options?: { readonly idempotencyKey?: string | undefined }): Promise<{ id: string; deduplicated: boolean }>;
}


const iso = (ms: number) => new Date(ms).toISOString();

/** Occurrences one statement enqueues at most (a schedule's own catch-up may pass it): the rest go in the next. */
const MAX_JOBS_PER_STATEMENT = 5_000;
/** How long a tick goes on enqueueing due occurrences, statement after statement; the rest are the next tick's. */
const MATERIALIZE_FOR_MS = 5_000;

/**
 * The idempotency key, and correlation id, of one occurrence: `schedule:<name>:<ISO>`. `nominal` is
 * a plan's `Run.nominal`: a skipped time sharing its instant with another keys by its own reading
 * (`schedule:<name>:2024-03-10T02:00:00.000-05:00`), which still parses to the instant.
 */
export const occurrenceKey = (name: string, occurrenceMs: number, nominal?: string) => `schedule:${name}:${nominal ?? iso(occurrenceMs)}`;

/**
 * Each defined (frozen) schedule's hash, made once per process: a queue built per request (edge runtimes)
 * hashed every definition again, 150 ms of CPU a tick at 5,000 schedules. Its stored payload is the
 * payload's JSON, the same for every queue it is given to.
 */
const definitionHashes = new WeakMap<Schedule, Promise<string>>();
const hashOnce = (p: Prepared): Promise<string> => {
  let hash = definitionHashes.get(p.schedule);
  if (!hash) definitionHashes.set(p.schedule, (hash = definitionHash({ ...p.schedule, payload: p.stored })));
  return hash;
};

/** Schedules already warned about in this process, so per-request instances (edge runtimes) warn once. */
const warnedDayMatch = new Set<string>();

/** One warning per schedule that a crontab ported from Vixie cron would read differently, unless dayMatch was chosen. */
const warnDayMatch = (prepared: readonly Prepared[], logger: Logger) => {
  for (const { schedule: s } of prepared) {
    if (!s.rule.vixieWouldNeedBoth || s.dayMatch !== undefined) continue;
    const key = `${s.name}\u0000${s.cron}`;
    if (warnedDayMatch.has(key)) continue;
    if (warnedDayMatch.size < 1_000) warnedDayMatch.add(key);
    logger.log("warn", "schedule runs on days matching either day field", {
      schedule: s.name,
      cron: s.cron,
      hint: 'both day fields are restricted, so pgtick (like cron-parser and POSIX) runs on days matching either; Vixie cron, where a field starting with "*" makes both required, would run only on days matching both. Set dayMatch: "or" to keep this, or "and" for the Vixie meaning.',
    });
  }
};

export interface Scheduling {
  readonly api: SchedulesApi;
  /** Present only when schedules were passed to createJobs. */
  readonly extension: TickExtension | undefined;
}

export const createScheduling = (env: {
  readonly schedules: readonly (Schedule | ScheduleDefinition)[] | undefined;
  readonly options?: ScheduleOptions;
  readonly registry: ReadonlyMap<string, AnyJob>;
  readonly settings: JobsSettings;
  readonly db: Db;
  readonly tables: Tables;
  readonly logger: Logger;
  /** The trace context to store with the jobs it enqueues: a tick's span for occurrences, the caller's for run-now. */
  readonly traceparent?: () => string | undefined;
}): Scheduling => {
  const prepared = prepare(env.schedules ?? [], env.registry, env.settings);
  warnDayMatch(prepared, env.logger);
  const byName = new Map(prepared.map((p) => [p.schedule.name, p]));
  const clock = env.options?.now;
  const graceMs = env.options?.graceMs ?? DEFAULT_GRACE_MS;
  if (!(graceMs >= 0)) throw new JobsError("invalid_config", "scheduleOptions.graceMs must be a non-negative number of milliseconds");
  const { db, tables, logger } = env;

  let hashing: Promise<{ byName: Map<string, string>; set: string }> | undefined;
  const hashes = () =>
    (hashing ??= (async () => {
      const entries = await Promise.all(prepared.map(async (p) => [p.schedule.name, await hashOnce(p)] as const));
      return { byName: new Map(entries), set: await setHash(entries.map(([, h]) => h)) };
    })());

  const rowInput = (p: Prepared, hash: string, nextMs: number): ScheduleRowInput => ({
    name: p.schedule.name,
    cron: p.schedule.cron,
    timezone: p.schedule.timezone,
    job_name: p.schedule.job,
    payload: p.stored,
    missed: p.schedule.missed,
    definition_hash: hash,
    next_run_at: iso(nextMs),
  });

  /** Brings the table in line with the code: two statements, only when the set hash differs. */
  const sync = async (client: Db) => {
    const { byName: hashOf, set } = await hashes();
    const read = await readScheduleHeads(client, tables);
    // The time of the read (a test's clock, else the database's), never the probe's: a tick of another
    // deployment may have handled an occurrence since, and starting before it would run it again.
    const nowMs = clock ? clock().getTime() : read.nowMs;
    const heads = new Map(read.rows.map((r) => [r.name, r]));
    const write: { insert: ScheduleRowInput[]; update: Array<SyncWrite["update"][number]> } = { insert: [], update: [] };
    for (const p of prepared) {
      const hash = hashOf.get(p.schedule.name)!;
      const row = heads.get(p.schedule.name);
      if (!row) write.insert.push(rowInput(p, hash, p.schedule.rule.nextAfter(nowMs)));
      else if (row.definition_hash !== hash) {
        // Occurrences before the old next_run_at were handled under the old definition; the
        // new one takes over from there (or from now, whichever is earlier), so none is lost or doubled.
        const from = Math.min(row.next_ms - 1, nowMs);
        write.update.push({ ...rowInput(p, hash, p.schedule.rule.nextAfter(from)), seen_hash: row.definition_hash, seen_next: iso(row.next_ms) });
      }
    }
    const result = await writeScheduleSync(client, tables, { ...write, keep: prepared.map((p) => p.schedule.name), setHash: set });
    logger.log("info", "schedules synced", { ...result });
  };

  /** Enqueues the due rows' occurrences, up to about MAX_JOBS_PER_STATEMENT; returns them and the last row handled. */
  const materialize = async (client: Db, due: readonly DueScheduleRow[], nowMs: number): Promise<{ enqueued: number; last: DueScheduleRow | undefined }> => {
    const { byName: hashOf } = await hashes();
    const advances: Advance[] = [];
    let [jobs, last]: [number, DueScheduleRow | undefined] = [0, undefined];
    for (const row of due) {
      // The rest wait for the next statement: a catch-up of 500 schedules of 1,000 occurrences was one statement
      // of 108 MB that never fit a tick.
      if (jobs >= MAX_JOBS_PER_STATEMENT) break;
      last = row;
      const p = byName.get(row.name);
      // A row from another deployment's definition: that deployment (or our next sync) handles it.
      if (!p || hashOf.get(row.name) !== row.definition_hash) continue;
      const plan = planOccurrences(p.schedule, Number(row.next_ms), nowMs, graceMs);
      if (plan.skipped) {
        logger.log("warn", "schedule occurrences missed", { schedule: row.name, policy: p.schedule.missed, from: iso(Number(row.next_ms)), enqueued: plan.occurrences.length });
      }
      advances.push({
        name: row.name,
        expected: iso(Number(row.next_ms)),
        definition_hash: row.definition_hash,
        next_run_at: iso(plan.next),
        jobs: plan.runs.map((r) => ({ id: newJobId(), run_at: iso(r.at), key: occurrenceKey(row.name, r.at, r.nominal), priority: p.priority, max_attempts: p.maxAttempts, ...p.keys })),
      });
      jobs += plan.runs.length;
    }
    const result = await materializeOccurrences(client, tables, advances, env.traceparent?.());
    for (const job of result.enqueued) logger.log("info", "schedule occurrence enqueued", { jobId: job.id, correlationId: job.key, idempotencyKey: job.key });
    return { enqueued: result.enqueued.length, last: last === due[due.length - 1] && due.length < DUE_LIMIT ? undefined : last };
  };

  const extension: TickExtension = {
    probe: (t) => scheduleProbeColumns(t, clock?.().toISOString()),
    async afterProbe(values, tick) {
      // A schedule failure is logged, never allowed to stop the tick from running jobs.
      try {
        const { set } = await hashes();
        // The rows the probe read are as they were before a sync, under the hash of the definitions they came from:
        // a changed schedule's due occurrence was passed over (and lost, when the next tick came too late to run it).
        const probed = values[PROBE_COLUMNS.hash] === set ? values : (await sync(tick.db), await readDueSchedules(tick.db, tables, undefined, clock?.().toISOString()));
        const nowMs = Number(probed[PROBE_COLUMNS.now]);
        let due = probed[PROBE_COLUMNS.due] as DueScheduleRow[] | null;
        let enqueued = 0;
        // More due than one read returns (or than one statement carries): on after the last handled, for a while.
        for (const started = Date.now(); due && due.length > 0 && Date.now() - started < MATERIALIZE_FOR_MS; ) {
          const done = await materialize(tick.db, due, nowMs);
          enqueued += done.enqueued;
          if (!done.last) break;
          due = (await readDueSchedules(tick.db, tables, done.last, clock?.().toISOString()))[PROBE_COLUMNS.due] as DueScheduleRow[] | null;
        }
        return enqueued;
      } catch (error) {
        tick.logger.log("error", "schedules step failed", { error: error instanceof Error ? error.message : String(error) });
        return 0;
      }
    },
  };

  const find = (name: string): Prepared => {
    const p = typeof name === "string" ? byName.get(name) : undefined;
    if (!p) throw new JobsError("not_found", `no schedule named ${JSON.stringify(name)} is defined`, { schedule: name });
    return p;
  };
  let sorted: Prepared[] | undefined;
  const nowMs = () => (clock ? clock().getTime() : Date.now());
  // What a write computes the next occurrence from: the database's clock, as a tick's sync uses.
  const writeNowMs = async () => (clock ? clock().getTime() : databaseNowMs(db));

  const setPaused = async (name: string, paused: boolean) => {
    const p = find(name);
    const hash = (await hashes()).byName.get(p.schedule.name)!;
    const row = await setSchedulePaused(db, tables, rowInput(p, hash, p.schedule.rule.nextAfter(await writeNowMs())), paused);
    logger.log("info", paused ? "schedule paused" : "schedule resumed", { schedule: name });
    return scheduleInfo(p, row, hash, 5, nowMs(), graceMs);
  };

  const api: SchedulesApi = {
    async list(query = {}) {
      const { byName: hashOf } = await hashes();
      sorted ??= [...prepared].sort((a, b) => (a.schedule.name < b.schedule.name ? -1 : 1));
      return listSchedulePage({ db, tables, sorted, hashOf, nowMs: nowMs(), graceMs }, query);
    },
    pause: (name) => setPaused(name, true),
    resume: (name) => setPaused(name, false),
    async run(name, options = {}) {
      onlyKeys(options, ["idempotencyKey"], "schedule run option");
      const idempotencyKey = keyText(options.idempotencyKey, "idempotencyKey");
      const p = find(name);
      const now = await writeNowMs();
      const key = `schedule:${p.schedule.name}:manual:${iso(now)}`;
      const hash = (await hashes()).byName.get(p.schedule.name)!;
      const result = await enqueueRunNow(db, tables, {
        id: newJobId(), schedule: p.schedule.name, job_name: p.schedule.job, payload: p.stored,
        priority: p.priority, max_attempts: p.maxAttempts, key, idempotency_key: idempotencyKey, ...p.keys, traceparent: env.traceparent?.() ?? null,
      }, rowInput(p, hash, p.schedule.rule.nextAfter(now)));
      logger.log("info", result.deduplicated ? "schedule run now: its key's job is there already" : "schedule run now", { schedule: p.schedule.name, jobId: result.id, correlationId: key });
      return result;
    },
  };

  return { api, extension: env.schedules === undefined ? undefined : extension };
};
