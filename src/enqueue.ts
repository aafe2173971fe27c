import type { JobsSettings } from "./settings/library.js";
import type { Db } from "./db.js";
import { JobsError } from "./errors.js";
import type { AnyJob } from "./job.js";
import { findKeyed, insertJobs, type EnqueuedRow, type NewJobRow } from "./store/enqueue/insert-jobs.js";
import type { Tables } from "./store/shared/tables.js";
import { prepareJob } from "./enqueue-prepare.js";

export interface EnqueueOptions {
  /** When the job becomes due: a Date or an ISO 8601 string. Not with `delayMs`. */
  readonly runAt?: Date | string | undefined;
  /** Due this long from now (the database's clock). Not with `runAt`. */
  readonly delayMs?: number | undefined;
  /** While a job with this name and key is queued or running, enqueueing again returns it instead. */
  readonly idempotencyKey?: string | undefined;
  readonly maxAttempts?: number | undefined;
  /** Higher runs first. Default: the job's own priority, else 0. */
  readonly priority?: number | undefined;
  /** Ties the job to the request or event that caused it, in logs and the dashboard. */
  readonly correlationId?: string | undefined;
  /**
   * While a job with this name and debounce key is queued, enqueueing again replaces its payload
   * and makes it due `delayMs` from now (the same id, `debounced: true`); once it runs, the next
   * enqueue queues a new one. With `maxWaitMs` (at least `delayMs`), it is due no later than that long
   * after this enqueue, whatever later ones say (they may bring it closer with their own). Not with
   * `runAt`, `delayMs` or `idempotencyKey`.
   */
  readonly debounce?: { readonly key: string; readonly delayMs: number; readonly maxWaitMs?: number | undefined };
}

export interface EnqueueItem extends EnqueueOptions {
  readonly job: string;
  readonly payload: unknown;
}

export interface EnqueueResult {
  readonly id: string;
  /** True when the idempotency key matched a job that was already queued or running. */
  readonly deduplicated: boolean;
  /** With `debounce`: true when a queued job took this payload and due time instead of a new job. */
  readonly debounced?: boolean;
}

const keyOf = (r: { job_name: string; idempotency_key: string | null; debounce_key?: string | null }) =>
  r.debounce_key ? `d\u0000${r.job_name}\u0000${r.debounce_key}` : `k\u0000${r.job_name}\u0000${r.idempotency_key}`;

/**
 * Inserts the rows and returns, per key, the id of the job holding it. A key
 * that matched a job committed after the insert's snapshot is looked up again;
 * if that job has finished since, the key is free and the row is inserted again.
 */
const insertResolvingKeys = async (db: Db, t: Tables, rows: readonly NewJobRow[], debounced: Set<string>): Promise<Map<string, string>> => {
  const byKey = new Map<string, string>();
  let todo = rows;
  for (let round = 0; round < 5 && todo.length > 0; round++) {
    const found: EnqueuedRow[] = await insertJobs(db, t, todo);
    for (const r of found) {
      byKey.set(keyOf(r), r.id);
      if (r.debounced) debounced.add(r.id);
    }
    // A debounced row always comes back (inserted or updated); an idempotency key may have matched a row committed meanwhile.
    const missing = todo.filter((r) => r.idempotency_key !== null && r.debounce_key === null && !byKey.has(keyOf(r)));
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
  /** The trace context of the enqueueing request (an observer's), stored with every job of the batch. */
  traceparent?: () => string | undefined,
): Promise<EnqueueResult[]> => {
  // Callers in JavaScript can pass anything: a clear error, not a TypeError from deep inside.
  if (!Array.isArray(items)) throw new JobsError("invalid_options", "enqueueMany takes an array of { job, payload, ...options }", { field: "items" });
  const trace = traceparent?.();
  const rows = items.map((item, index) => {
    if (typeof item !== "object" || item === null) throw new JobsError("invalid_options", "each item must be { job, payload, ...options }", batch ? { index } : {});
    return prepareJob(registry, settings, item, batch ? { index } : {}, trace);
  });
  // One statement may not touch a row twice: repeats of an idempotency key within the batch share
  // the first row; repeats of a debounce key, the last (the last payload wins).
  // The last of a debounce key's rows carries the shortest cap any of them gave, as one enqueue after another would set it.
  const byBatchKey = new Map<string, NewJobRow>();
  const caps = new Map<string, number>();
  for (const row of rows) {
    if (row.debounce_key !== null) {
      byBatchKey.set(keyOf(row), row);
      if (row.max_wait_ms !== undefined) caps.set(keyOf(row), Math.min(row.max_wait_ms, caps.get(keyOf(row)) ?? Infinity));
    } else if (row.idempotency_key !== null && !byBatchKey.has(keyOf(row))) byBatchKey.set(keyOf(row), row);
  }
  const plain = rows.filter((row) => row.idempotency_key === null && row.debounce_key === null);
  // Keyed rows in the order of their keys: two batches holding the same keys in other orders then
  // wait for each other's inserts in one order, where they deadlocked.
  const keyed = [...byBatchKey.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, row]) => (caps.has(key) ? { ...row, max_wait_ms: caps.get(key)! } : row));
  const unique = [...plain, ...keyed];
  const debounced = new Set<string>();
  const byKey = await insertResolvingKeys(db, t, unique, debounced);
  const seen = new Set<string>();
  return rows.map((own) => {
    if (own.idempotency_key === null && own.debounce_key === null) return { id: own.id, deduplicated: false };
    const id = byKey.get(keyOf(own))!;
    if (own.debounce_key !== null) {
      // Folded into another enqueue of this batch, or into a queued job: debounced.
      const result = { id, deduplicated: false, debounced: byBatchKey.get(keyOf(own)) !== own || debounced.has(id) };
      return result;
    }
    // A repeat within the batch, or a key that matched a live job (its id, not ours).
    const deduplicated = seen.has(keyOf(own)) || id !== own.id;
    seen.add(keyOf(own));
    return { id, deduplicated };
  });
};
