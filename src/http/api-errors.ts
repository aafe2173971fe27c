import { BodyCut } from "../body-limit.js";
import type { Context } from "hono";
import { databaseUnavailable, sqlState, StatementTimeout } from "../db.js";
import { isJobsError, type JobsErrorCode, misconfiguration } from "../errors.js";

/** Every code the API answers with. JobsError codes plus the few only HTTP has. */
export type ApiErrorCode = JobsErrorCode | "no_route" | "method_not_allowed" | "internal" | "unavailable";

export const STATUS: Record<ApiErrorCode, 400 | 401 | 404 | 405 | 409 | 413 | 415 | 422 | 500 | 503> = {
  malformed_json: 400,
  unauthorized: 401,
  unknown_job: 404,
  not_found: 404,
  // Not a missing job, run or letter: the path names no route (a client with a wrong base URL).
  no_route: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_payload: 422,
  invalid_options: 422,
  invalid_schedule: 422,
  // A server fault: the settings of this deployment are wrong. The client cannot fix it.
  invalid_config: 500,
  internal: 500,
  unavailable: 503,
};

/** The one error body: `{ "error": { "code", "message", "details"? } }`. */
export interface ApiErrorBody {
  readonly error: { readonly code: ApiErrorCode; readonly message: string; readonly details?: unknown };
}

/** An error the API answers with as it is (a JobsError's codes, plus HTTP-only ones). */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const errorResponse = (c: Context, code: ApiErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) => {
  for (const [k, v] of Object.entries(headers)) c.header(k, v);
  const error = details === undefined ? { code, message } : { code, message, details };
  return c.json({ error } satisfies ApiErrorBody, STATUS[code]);
};


/**
 * Classifies a thrown value: client errors keep their code and message; a
 * unique violation is a conflict; a value the database refused (SQLSTATE class
 * 22, data exception) is the client's input; anything else is a server fault
 * whose details are only logged.
 */
export const classify = (
  e: unknown,
): { code: ApiErrorCode; message: string; details?: unknown; headers?: Record<string, string>; fault: boolean; passing?: boolean } => {
  if (e instanceof ApiError) return { code: e.code, message: e.message, details: e.details, headers: e.headers, fault: false };
  // The client's doing, not a fault: no one is there to read the answer.
  if (e instanceof BodyCut) return { code: "malformed_json", message: e.message, fault: false };
  const wrong = misconfiguration(e);
  if (wrong !== undefined) return { code: "internal", message: `the server is misconfigured${wrong}; see its logs`, fault: true };
  if (isJobsError(e)) return { code: e.code, message: e.message, details: e.details, fault: false };
  // A statement given up at its bound (an admin read while the database stalls): the server is fine.
  if (e instanceof StatementTimeout) return { code: "unavailable", message: e.message, fault: true, passing: true };
  // The database down, restarting, out of connections, or the connection cut: try again.
  if (databaseUnavailable(e)) return { code: "unavailable", message: "the database is unavailable right now; try again", fault: true, passing: true };
  const state = sqlState(e);
  // A statement larger than the connection takes (Neon's HTTP endpoint: 10 MiB): the request's size, not a fault.
  if (state === "54000") return { code: "payload_too_large", message: `the request is larger than the database takes in one statement; send less at once (${(e as Error).message})`, fault: false };
  // lock_timeout: another session held a lock the statement needed; nothing was changed.
  if (state === "55P03") return { code: "unavailable", message: "another session held a lock this needed (lock_timeout); try again", fault: true, passing: true };
  if (state === "23505") return { code: "conflict", message: "a job with this id or idempotency key already exists", fault: false };
  // A deadlock or serialization failure rolled the statement back whole: the same request may pass now.
  if (state === "40P01" || state === "40001") return { code: "conflict", message: "another change to the same rows crossed this one; nothing was changed, try again", fault: false };
  if (state?.startsWith("22")) {
    return { code: "invalid_options", message: `the database refused a value: ${(e as Error).message}`, fault: false };
  }
  return { code: "internal", message: "internal error", fault: true };
};
