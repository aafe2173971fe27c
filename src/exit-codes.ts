import { databaseUnavailable, errorCode, StatementTimeout } from "./db.js";
import { isJobsError, type JobsErrorCode, MigrationLocked, misconfiguration, tlsFailed } from "./errors.js";

/**
 * Exit codes a script can branch on. Stable: documented in the README and
 * printed by `pgtick --help`.
 */
export const EXIT = {
  ok: 0,
  /** Something unexpected: a database error, a bug. */
  failed: 1,
  /** The command line itself is wrong: unknown command or option, missing argument, JSON that does not parse. */
  usage: 2,
  /** The library refused the input: unknown job, payload not matching the schema, bad option value. */
  rejected: 3,
  /** No such job, dead letter, run or schedule. */
  notFound: 4,
  /** A live job holds the id or idempotency key a replay needs, or the job to cancel or run now is running. */
  conflict: 5,
  /** Configuration: DATABASE_URL unset or refused (no such database, role or password, a failed TLS handshake), jobs module missing or broken, tables not migrated. */
  config: 6,
  /** The database could not be reached, or did not answer in time: worth trying again. */
  unreachable: 7,
  /** Ctrl-C (128 + SIGINT), as shells report it. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error meant for the operator: one line of text and the exit code to end with. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    message: string,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(EXIT.usage, message);

const BY_CODE: Record<JobsErrorCode, ExitCode> = {
  unknown_job: EXIT.rejected,
  invalid_payload: EXIT.rejected,
  payload_too_large: EXIT.rejected,
  invalid_options: EXIT.rejected,
  invalid_schedule: EXIT.rejected,
  malformed_json: EXIT.usage,
  unsupported_media_type: EXIT.usage,
  not_found: EXIT.notFound,
  conflict: EXIT.conflict,
  invalid_config: EXIT.config,
  unauthorized: EXIT.config,
};


/**
 * Out of reach (see databaseUnavailable): worth trying again. A refused login, a missing database or a
 * failed TLS handshake is not: it is configuration (6), as the API calls it (misconfiguration).
 */
const isUnreachable = (e: unknown): boolean => databaseUnavailable(e) || e instanceof MigrationLocked;


/** A server that took the connection and never answered (the pool's connectionTimeoutMillis). */
const silentServer = (e: unknown): boolean => e instanceof Error && /connection timeout|timeout exceeded when trying to connect/i.test(e.message);

/** The code to exit with for any error a command threw. */
export const exitCodeFor = (e: unknown): ExitCode => {
  if (e instanceof CliError) return e.exitCode;
  if (isJobsError(e)) return BY_CODE[e.code] ?? EXIT.failed;
  // A lock held past lock_timeout: given up as a statement past statement_timeout is (the API answers both 503).
  if (isUnreachable(e) || errorCode(e) === "55P03") return EXIT.unreachable;
  if (errorCode(e) === "42P01" || misconfiguration(e) !== undefined) return EXIT.config;
  return EXIT.failed;
};

const issuesText = (details: unknown, message: string): string => {
  const issues = (details as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues)) return "";
  // One issue the message already says (text PostgreSQL cannot store): only where it is.
  const [only] = issues as Array<{ path?: unknown[]; message?: string }>;
  if (issues.length === 1 && only?.message && message.endsWith(only.message)) {
    return Array.isArray(only.path) && only.path.length > 0 ? ` (at ${only.path.join(".")})` : "";
  }
  const parts = issues.slice(0, 5).map((i: { path?: unknown[]; message?: string }) => {
    const path = Array.isArray(i.path) && i.path.length > 0 ? `${i.path.join(".")}: ` : "";
    return `${path}${i.message ?? "invalid"}`;
  });
  return `: ${parts.join("; ")}${issues.length > 5 ? `; and ${issues.length - 5} more` : ""}`;
};

/** One line that says what went wrong, without a stack: what the operator sees. */
export const oneLine = (e: unknown): string => {
  if (isJobsError(e)) return `${e.message}${issuesText(e.details, e.message)}`.replace(/\s*\n\s*/g, " ");
  const code = errorCode(e);
  const message = e instanceof Error ? e.message || code || e.name : String(e);
  if (e instanceof StatementTimeout || e instanceof MigrationLocked) return message;
  if (silentServer(e)) return `cannot connect to the database: it took the connection but did not answer (${message})`;
  // Connected, and the server gave the statement up (statement_timeout, a cancel, lock_timeout): no connection trouble.
  if (code === "57014" || code === "55P03") return `the database gave the statement up: ${message}`;
  if (isUnreachable(e)) return `cannot connect to the database: ${message || code}`;
  if (code === "42P01") return `${message}: the tables do not exist yet; run \`pgtick migrate\` first (or check JOBS_TABLE_PREFIX)`;
  const wrong = misconfiguration(e);
  // A refused login, a missing database, a failed TLS handshake: no connection, for a reason to fix.
  const refused = code === "3D000" || code?.startsWith("28") || tlsFailed(e);
  if (wrong) return `${refused ? "cannot connect to the database: " : ""}${message}${wrong}`;
  return message.replace(/\s*\n\s*/g, " ");
};
