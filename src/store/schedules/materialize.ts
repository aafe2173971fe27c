import type { Db } from "../../db.js";
import { queueInsert, selectColumns } from "../shared/queue-insert.js";
import { Params, type Tables } from "../shared/tables.js";

export interface OccurrenceJob {
  readonly id: string;
  /** The occurrence instant (ISO): the job is due then, so late occurrences run first. */
  readonly run_at: string;
  /** `schedule:<name>:<occurrence ISO>` (see occurrenceKey); also the correlation id. */
  readonly key: string;
  readonly priority: number;
  readonly max_attempts: number;
  /** The keys of the job's limits, from the schedule's payload. */
  readonly flow_key: string | null;
  readonly concurrency_key: string | null;
  readonly rate_keys: Record<string, string> | null;
}

export interface Advance {
  readonly name: string;
  /** The next_run_at (ISO) this tick saw: the compare-and-set's old value. */
  readonly expected: string;
  readonly definition_hash: string;
  /** ISO of the first occurrence after the tick's now. */
  readonly next_run_at: string;
  /** Occurrences to enqueue, oldest first; empty when the missed policy skips them all. */
  readonly jobs: readonly OccurrenceJob[];
}

export interface MaterializeResult {
  /** Schedules this statement advanced; the others were advanced (or changed, or paused) by someone else. */
  readonly advanced: string[];
  readonly enqueued: Array<{ id: string; key: string }>;
}

/**
 * The exactly-once step, as one statement. Each schedule row is locked (in name
 * order, skipping rows another tick holds) only if next_run_at still equals what
 * this tick saw, is moved to its next occurrence, and only the advanced rows feed
 * the insert. A second tick that saw the same next_run_at finds it moved and
 * inserts nothing, whether it ran at the same time or a minute later.
 */
export const materializeOccurrences = async (db: Db, t: Tables, advances: readonly Advance[], traceparent?: string): Promise<MaterializeResult> => {
  if (advances.length === 0) return { advanced: [], enqueued: [] };
  const p = new Params();
  const input = advances.map((a) => {
    const last = a.jobs[a.jobs.length - 1];
    return { ...a, last_job_id: last?.id ?? null, last_occurrence_at: last?.run_at ?? null };
  });
  const text = `
    WITH input AS (
      SELECT * FROM jsonb_to_recordset(${p.json(input)}) AS i(
        name text, expected timestamptz, definition_hash text, next_run_at timestamptz, jobs jsonb,
        last_job_id uuid, last_occurrence_at timestamptz)),
    locked AS (
      SELECT s.name FROM ${t.schedules} s JOIN input i ON i.name = s.name
      WHERE s.next_run_at = i.expected AND s.definition_hash = i.definition_hash AND NOT s.paused
      ORDER BY s.name
      FOR UPDATE OF s SKIP LOCKED),
    advanced AS (
      UPDATE ${t.schedules} s
      SET next_run_at = i.next_run_at, updated_at = now(),
          last_enqueued_at = CASE WHEN i.last_job_id IS NULL THEN s.last_enqueued_at ELSE now() END,
          last_job_id = coalesce(i.last_job_id, s.last_job_id),
          last_occurrence_at = coalesce(i.last_occurrence_at, s.last_occurrence_at)
      FROM input i JOIN locked l ON l.name = i.name
      WHERE s.name = i.name AND s.next_run_at = i.expected AND s.definition_hash = i.definition_hash
      RETURNING s.name, s.job_name, s.payload, i.jobs),
    enqueued AS (
      ${queueInsert(t, `${selectColumns("j", { job_name: "a.job_name", payload: "a.payload", idempotency_key: "j.key", correlation_id: "j.key", debounce_key: "NULL::text", traceparent: `${p.add(traceparent ?? null)}::text` })}
      FROM advanced a CROSS JOIN LATERAL jsonb_to_recordset(a.jobs)
        AS j(id uuid, run_at timestamptz, key text, priority integer, max_attempts integer, flow_key text, concurrency_key text, rate_keys jsonb)`,
      `ON CONFLICT (job_name, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id, idempotency_key`)})
    SELECT (SELECT coalesce(jsonb_agg(name ORDER BY name), '[]'::jsonb) FROM advanced) AS advanced,
           (SELECT coalesce(jsonb_agg(jsonb_build_object('id', id, 'key', idempotency_key)), '[]'::jsonb) FROM enqueued) AS enqueued`;
  const { rows } = await db.query<MaterializeResult>(text, p.values);
  return rows[0]!;
};
