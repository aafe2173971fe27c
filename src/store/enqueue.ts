import type { Db } from "../db.js";
import { Params, type Tables } from "./tables.js";

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
 * Inserts many jobs in one statement. Jobs without a key take a plain insert;
 * keyed jobs take ON CONFLICT: a key that matches a queued or running job of the
 * same name returns that job's id instead of inserting (the no-op DO UPDATE is
 * what makes the existing row visible to RETURNING even when a concurrent insert
 * committed after this statement's snapshot). Only keyed rows are returned: an
 * unkeyed row's id is the one the caller generated.
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
      ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL
      DO UPDATE SET idempotency_key = excluded.idempotency_key
      RETURNING q.id, q.job_name, q.idempotency_key)`);
  }
  const text = `WITH ${ctes.join(",\n")}\n${keyed ? "SELECT id, job_name, idempotency_key FROM keyed" : "SELECT 1 WHERE false"}`;
  const result = await db.query<EnqueuedRow>(text, p.values);
  return result.rows;
};
