/** The queue's fixed words and bounds, named once for the library, the API, the dashboard and the CLI. */

/** The most handlers one tick runs at once (the CLI's --concurrency takes as many), and so the most jobs a claim takes. */
export const MAX_CONCURRENCY = 10_000;

/** The most attempts a job may have (`maxAttempts`, per job or per enqueue). */
export const MAX_ATTEMPTS = 1_000;

/** The most characters a key, an id of the caller's or a filter holds. */
export const MAX_KEY_CHARS = 255;

/**
 * Longer than `max` characters as PostgreSQL and a job's name count them (code points): a key of 200
 * emoji is 400 UTF-16 units and 200 characters. Counted only when the units alone cannot decide.
 */
export const longerThan = (text: string, max: number): boolean => text.length > max && (text.length > 2 * max || [...text].length > max);

export const isMaxAttempts = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= MAX_ATTEMPTS;

/** Why a job became a dead letter; shown by the dashboard and filterable. */
export const DEAD_REASONS = [
  "permanent", // the handler threw PermanentJobError
  "exhausted", // it failed on its last attempt
  "invalid_payload", // the stored payload no longer parses under the job's schema
  "no_handler", // no deployment that ticked had a handler for its name
  "deadline", // its last attempt was cut short by the tick's deadline
  "lease_expired", // its last attempt's tick was killed
] as const;
export type DeadReason = (typeof DEAD_REASONS)[number];

/** A job in the queue is waiting or being run; a finished one leaves it. */
export const JOB_STATUSES = ["queued", "running"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** The most next runs a schedule lists, and a page of schedules may compute in all (each costs the zone's arithmetic). */
export const MAX_NEXT_RUNS = 100;
export const MAX_RUNS_PER_PAGE = 5_000;

/** How long run history is kept by default (`JOBS_HISTORY_RETENTION`), and what was recorded before history was turned off. */
export const DEFAULT_HISTORY_RETENTION_MS = 7 * 86_400_000;

/** The shortest grace past a tick's deadline (other than 0) that leaves its final statement a round trip to the database. */
export const MIN_GRACE_MS = 100;
