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

/**
 * The connection's TLS failed: the server does not take it (sslmode=require against one without), or a
 * certificate was refused. By its code where it has one (a connection reset during the handshake is an
 * outage, whatever its words say; a statement's SQLSTATE is no TLS failure), else by its words.
 */
export const tlsFailed = (e: unknown): boolean => {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  // Node's: ERR_TLS_*, ERR_SSL_*, *_CERT_*, SELF_SIGNED_*, UNABLE_TO_VERIFY_LEAF_SIGNATURE.
  return code ? /TLS|SSL|CERT|SIGN/.test(String(code)) : /\bSSL\b|\bTLS\b|certificate/i.test(e.message);
};

/**
 * What the deployment got wrong, when that is what an error says (a setting; the database named by
 * DATABASE_URL, or its role, refused; a table the role may not use): said as such, never as the
 * database being down. "" for a setting (the logs name it), undefined when it is something else.
 */
export const misconfiguration = (e: unknown): string | undefined => {
  if (isJobsError(e)) return e.code === "invalid_config" ? "" : undefined;
  // Read as a database that does not answer, and a 500 "internal error" on the API.
  if (tlsFailed(e)) return " (its TLS failed: see DATABASE_URL's sslmode)";
  const state = (e as { code?: unknown } | null)?.code;
  // insufficient_privilege: the deployment's role may not use a table (one a later migration added, not granted).
  if (state === "42501") return " (its database role may not use a table it needs)";
  if (state === "3D000") return " (DATABASE_URL's database does not exist)";
  // read_only_sql_transaction: a standby, a read replica's endpoint, or default_transaction_read_only (was a 500 "internal error").
  if (state === "25006") return " (DATABASE_URL's database takes no writes: a standby or read replica, or default_transaction_read_only)";
  // invalid_authorization_specification, invalid_password: a role or password the server refuses.
  if (typeof state === "string" && state.startsWith("28")) return " (DATABASE_URL's role or password is refused)";
  return undefined;
};
