import type { Db } from "../../db.js";
import { Params, type Tables } from "../shared/tables.js";

export interface NewJobRow {
  readonly id: string;
  readonly job_name: string;
  readonly payload: unknown;
  /** ISO time; when absent the job is due `delay_ms` after the database's now(). */
  readonly run_at: string | null;
  readonly delay_ms: number | null;
  readonly priority: number;
  readonly max_attempts: number;
  readonly idempotency_key: string | null;
  readonly correlation_id: string | null;
}

export interface EnqueuedRow {
  readonly id: string;
  readonly job_name: string;
  readonly idempotency_key: string | null;
}

/**
 * Inserts many jobs in one statement. Jobs without a key take a plain insert.
 * Keyed jobs take ON CONFLICT DO NOTHING, so a key that matches a queued or
 * running job of the same name inserts nothing and never locks that job's row
 * (an enqueue inside a long caller transaction must not stall a tick's settle).
 * Returned: for each keyed input, the id now holding its key, either the new
 * row or the live one it matched. A key missing from the result matched a row
 * committed after this statement's snapshot; `findKeyed` looks again.
 */
export const insertJobs = async (db: Db, t: Tables, rows: readonly NewJobRow[]): Promise<EnqueuedRow[]> => {
  if (rows.length === 0) return [];
  const p = new Params();
  const keyed = rows.some((r) => r.idempotency_key !== null);
  const plain = rows.some((r) => r.idempotency_key === null);
  const values = (where: string) => `
    SELECT x.id, x.job_name, x.payload,
           coalesce(x.run_at, now() + coalesce(x.delay_ms, 0) * interval '1 millisecond'),
           x.priority, x.max_attempts, x.idempotency_key, x.correlation_id
    FROM input x WHERE x.idempotency_key IS ${where}`;
  const columns = `(id, job_name, payload, run_at, priority, max_attempts, idempotency_key, correlation_id)`;
  const ctes = [
    `input AS MATERIALIZED (SELECT * FROM jsonb_to_recordset(${p.json(rows)}) AS x(
      id uuid, job_name text, payload jsonb, run_at timestamptz, delay_ms bigint,
      priority integer, max_attempts integer, idempotency_key text, correlation_id text))`,
  ];
  if (plain) ctes.push(`plain AS (INSERT INTO ${t.queue} ${columns} ${values("NULL")})`);
  if (keyed) {
    ctes.push(`keyed AS (INSERT INTO ${t.queue} AS q ${columns} ${values("NOT NULL")}
      ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING q.id, q.job_name, q.idempotency_key)`);
  }
  const select = keyed
    ? `SELECT id, job_name, idempotency_key FROM keyed
       UNION ALL
       SELECT q.id, q.job_name, q.idempotency_key
       FROM ${t.queue} q JOIN input x ON q.job_name = x.job_name AND q.idempotency_key = x.idempotency_key
       WHERE NOT EXISTS (SELECT 1 FROM keyed k WHERE k.id = x.id)`
    : "SELECT NULL::uuid AS id, NULL AS job_name, NULL AS idempotency_key WHERE false";
  const result = await db.query<EnqueuedRow>(`WITH ${ctes.join(",\n")}\n${select}`, p.values);
  return result.rows;
};

/** The live jobs holding these (name, key) pairs, read in a fresh snapshot. */
export const findKeyed = async (db: Db, t: Tables, keys: ReadonlyArray<{ job_name: string; idempotency_key: string }>): Promise<EnqueuedRow[]> => {
  if (keys.length === 0) return [];
  const p = new Params();
  const { rows } = await db.query<EnqueuedRow>(
    `SELECT q.id, q.job_name, q.idempotency_key
     FROM ${t.queue} q JOIN jsonb_to_recordset(${p.json(keys)}) AS x(job_name text, idempotency_key text)
       ON q.job_name = x.job_name AND q.idempotency_key = x.idempotency_key`,
    p.values,
  );
  return rows;
};
