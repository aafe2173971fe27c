// `pgtick`: the library. Jobs and schedules, enqueue, the tick, the admin calls, drivers and settings.
// The HTTP app and dashboard are `pgtick/http`, the typed client `pgtick/client`, the platform
// entrypoints `pgtick/vercel` and `pgtick/cloudflare`.
export { defineJob, type AnyJob, type JobContext, type JobDefinition, type JobInput, type JobOutput, type BackoffOptions, type ConcurrencyLimit, type RateLimit } from "./job.js";
export { createJobs, type AnyJobs, type EnqueueItemFor, type Jobs, type JobsOptions, type TypedEnqueueItem, type WithDb } from "./jobs.js";
export type { QueueAdmin, DeadLettersAdmin, RunsAdmin, ListJobsQuery, ListDeadLettersQuery, ListRunsQuery } from "./admin/admin.js";
export { RUN_OUTCOMES, type RunOutcome, type RunSummary, type RunView } from "./store/runs/run-views.js";
export type { LogLine } from "./store/tick/history.js";
export { defineObserver } from "./observe/safe.js";
export type { Observer, WiredObserver, TickInfo, TickObservation, RunInfo, RunObservation, RunEnd, RunOutcome as ObservedRunOutcome, ReclaimedRun } from "./observe/observer.js";
export { JobsError, MigrationLocked, PermanentJobError, isJobsError, type JobsErrorCode } from "./errors.js";
export { fromPg, fromNeonHttp, countingDb, StatementTimeout, type Db, type NeonHttpLike, type PgLike, type QueryResult, type QueryOptions } from "./db.js";
export { resolveSettings, settingsFromEnv, ENV_NAMES, DEFAULT_SETTINGS, type Env, type JobsSettings, type JobsSettingsInput } from "./settings/library.js";
export { jsonLogger, memoryLogger, silentLogger, type Logger, type LogLevel } from "./log.js";
export { migrate, migrationStatement, type Migration } from "./migrate.js";
export type { EnqueueItem, EnqueueOptions, EnqueueResult } from "./enqueue.js";
export type { Handoff, TickExtension, TickOptions, TickReport } from "./tick/types.js";
export { parseDuration } from "./settings/duration.js";
export {
  defineSchedule, occurrenceKey, type ListSchedulesQuery, type MissedPolicy, type Schedule, type ScheduleDefinition, type ScheduleInfo, type ScheduleOptions, type SchedulesApi, type TypedScheduleDefinition,
} from "./schedules/index.js";
export { DEAD_REASONS, MAX_ATTEMPTS, JOB_STATUSES, type DeadReason, type JobStatus } from "./terms.js";
export type { BulkReplayResult, BulkReplaySelector } from "./store/admin/replay-bulk.js";
export type { Stats, QueueDepth, MinuteCounts } from "./store/admin/stats.js";
export type { DurationSummary, QueuePoint, Series, SeriesRange, ThroughputPoint } from "./store/admin/series.js";
export { PAYLOAD_PREVIEW_CHARS, type JobView, type JobSummary, type DeadLetterView, type DeadLetterSummary, type PayloadPreview } from "./store/admin/views.js";
export type { Page } from "./store/shared/paging.js";
export type { Tables } from "./store/shared/tables.js";
export type { WaitingOn } from "./flow/waiting.js";
