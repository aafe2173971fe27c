import type { JobsSettings } from "./settings/library.js";
import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import type { AnyJob } from "./job.js";
import { isMaxAttempts, MAX_ATTEMPTS } from "./terms.js";
import { findKeyed, insertJobs, type EnqueuedRow, type NewJobRow } from "./store/enqueue/insert-jobs.js";
import type { Tables } from "./store/shared/tables.js";
import { checkPayload, unstorable } from "./payload.js";

export interface EnqueueOptions {
  /** When the job becomes due: a Date or an ISO 8601 string. Not with `delayMs`. */
  readonly runAt?: Date | string;
  /** Due this long from now (the database's clock). Not with `runAt`. */
  readonly delayMs?: number;
  /** While a job with this name and key is queued or running, enqueueing again returns it instead. */
  readonly idempotencyKey?: string;
  readonly maxAttempts?: number;
  /** Higher runs first. Default: the job's own priority, else 0. */
  readonly priority?: number;
  /** Ties the job to the request or event that caused it, in logs and the dashboard. */
  readonly correlationId?: string;
}

export interface EnqueueItem extends EnqueueOptions {
  readonly job: string;
  readonly payload: unknown;
}

export interface EnqueueResult {
  readonly id: string;
  /** True when the idempotency key matched a job that was already queued or running. */
  readonly deduplicated: boolean;
}

const INT32 = 2_147_483_647;

const badOption = (message: string, where: Record<string, unknown>, field: string): never => {
  throw new JobsError("invalid_options", message, { ...where, field });
};

const shortText = (value: unknown, field: string, where: Record<string, unknown>): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string" || value.length === 0 || value.length > 255 || unstorable(value)) {
    return badOption(`${field} must be a string of 1 to 255 characters`, where, field);
  }
  return value;
};

/** Validates one item completely (payload and options) and turns it into the row to insert. */
export const prepareJob = (
  registry: ReadonlyMap<string, AnyJob>,
  settings: JobsSettings,
  item: EnqueueItem,
  where: Record<string, unknown> = {},
): NewJobRow => {
  const { job, stored } = checkPayload(registry, item.job, item.payload, settings.maxPayloadBytes, where);
  let runAt: string | null = null;
  if (item.runAt !== undefined && item.runAt !== null) {
    const date = item.runAt instanceof Date ? item.runAt : typeof item.runAt === "string" ? new Date(item.runAt) : undefined;
    // Years 1970-9999: what every driver and PostgreSQL round-trip exactly.
    if (!date || Number.isNaN(date.getTime()) || date.getTime() < 0 || date.getTime() >= 253_402_300_800_000) {
      badOption("runAt must be a date or an ISO 8601 timestamp between the years 1970 and 9999", where, "runAt");
    }
    runAt = date!.toISOString();
  }
  let delayMs: number | null = null;
  if (item.delayMs !== undefined && item.delayMs !== null) {
    if (typeof item.delayMs !== "number" || !Number.isFinite(item.delayMs) || item.delayMs < 0 || item.delayMs > 1e13) {
      badOption("delayMs must be a non-negative number of milliseconds", where, "delayMs");
    }
    if (runAt !== null) badOption("give runAt or delayMs, not both", where, "delayMs");
    delayMs = Math.round(item.delayMs);
  }
  const priority = item.priority ?? job.priority ?? 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > INT32) badOption("priority must be an integer", where, "priority");
  const maxAttempts = item.maxAttempts ?? job.maxAttempts ?? settings.defaultMaxAttempts;
  if (!isMaxAttempts(maxAttempts)) {
    badOption(`maxAttempts must be an integer from 1 to ${MAX_ATTEMPTS}`, where, "maxAttempts");
  }
  return {
    id: crypto.randomUUID(),
    job_name: job.name,
    payload: stored,
    run_at: runAt,
    delay_ms: delayMs,
    priority,
    max_attempts: maxAttempts,
    idempotency_key: shortText(item.idempotencyKey, "idempotencyKey", where),
    correlation_id: shortText(item.correlationId, "correlationId", where),
  };
};

const keyOf = (r: { job_name: string; idempotency_key: string | null }) => `${r.job_name}\u0000${r.idempotency_key}`;

/**
 * Inserts the rows and returns, per key, the id of the job holding it. A key
 * that matched a job committed after the insert's snapshot is looked up again;
 * if that job has finished since, the key is free and the row is inserted again.
 */
const insertResolvingKeys = async (db: Db, t: Tables, rows: readonly NewJobRow[]): Promise<Map<string, string>> => {
  const byKey = new Map<string, string>();
  let todo = rows;
  for (let round = 0; round < 5 && todo.length > 0; round++) {
    const found: EnqueuedRow[] = await insertJobs(db, t, todo);
    for (const r of found) byKey.set(keyOf(r), r.id);
    const missing = todo.filter((r) => r.idempotency_key !== null && !byKey.has(keyOf(r)));
    for (const r of await findKeyed(db, t, missing.map((m) => ({ job_name: m.job_name, idempotency_key: m.idempotency_key! })))) {
      byKey.set(keyOf(r), r.id);
    }
    todo = missing.filter((r) => !byKey.has(keyOf(r)));
  }
  if (todo.length > 0) throw new JobsError("conflict", "an idempotency key kept changing hands while enqueueing; try again");
  return byKey;
};

/**
 * Validates every item first (nothing is written if one is bad; the error names
 * its index), then inserts all of them in one statement.
 */
export const enqueueMany = async (
  db: Db,
  t: Tables,
  registry: ReadonlyMap<string, AnyJob>,
  settings: JobsSettings,
  items: readonly EnqueueItem[],
  batch = true,
): Promise<EnqueueResult[]> => {
  const rows = items.map((item, index) => prepareJob(registry, settings, item, batch ? { index } : {}));
  // One statement may not touch a row twice, so repeats of a key within the batch share the first row.
  const firstByKey = new Map<string, NewJobRow>();
  const unique: NewJobRow[] = [];
  const target = rows.map((row) => {
    if (row.idempotency_key === null) {
      unique.push(row);
      return row;
    }
    const k = `${row.job_name}\u0000${row.idempotency_key}`;
    const first = firstByKey.get(k);
    if (first) return first;
    firstByKey.set(k, row);
    unique.push(row);
    return row;
  });
  const byKey = await insertResolvingKeys(db, t, unique);
  const seen = new Set<NewJobRow>();
  return target.map((own) => {
    if (own.idempotency_key === null) return { id: own.id, deduplicated: false };
    const id = byKey.get(keyOf(own))!;
    // A repeat within the batch, or a key that matched a live job (its id, not ours).
    const deduplicated = seen.has(own) || id !== own.id;
    seen.add(own);
    return { id, deduplicated };
  });
};
