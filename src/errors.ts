/** Stable error codes: the HTTP API maps each to a status, the CLI to an exit code. */
export type JobsErrorCode =
  | "unknown_job"
  | "invalid_payload"
  | "payload_too_large"
  | "invalid_options"
  | "invalid_config"
  | "invalid_schedule"
  | "not_found"
  | "conflict"
  | "unauthorized"
  | "malformed_json"
  | "unsupported_media_type";

/** A client-facing error: a stable code, a message meant for people, optional details. */
export class JobsError extends Error {
  override readonly name = "JobsError";
  constructor(
    readonly code: JobsErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const isJobsError = (e: unknown): e is JobsError =>
  e instanceof JobsError || (e instanceof Error && e.name === "JobsError" && "code" in e);

/**
 * Thrown by a handler when retrying cannot help (a deleted account, a malformed
 * upstream record): the job is dead-lettered at once, with no further attempt.
 */
export class PermanentJobError extends Error {
  override readonly name = "PermanentJobError";
}

// By name as well as by class, so a second copy of the library in a bundle still counts.
export const isPermanent = (e: unknown): boolean => {
  try {
    return e instanceof PermanentJobError || (e instanceof Error && e.name === "PermanentJobError");
  } catch {
    // A thrown value whose prototype or name cannot be read (a Proxy, a throwing getter) is an ordinary failure.
    return false;
  }
};

/** A migration could not take its table locks in time (see migrate.ts): nothing was applied. */
export class MigrationLocked extends Error {
  override readonly name = "MigrationLocked";
  constructor(
    readonly retriedForMs: number,
    lockTimeoutMs: number,
  ) {
    super(
      `the migration could not take its table locks within ${Math.round(retriedForMs / 1000)} s (each wait is cut at ${lockTimeoutMs} ms, then retried): a long transaction holds the tables (a backup, a report); nothing was applied, try again when it is done`,
    );
  }
}
