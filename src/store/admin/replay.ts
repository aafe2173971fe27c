import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import type { FlowKeys } from "../../flow/keys.js";
import { isUuid } from "../shared/sql.js";
import type { Tables } from "../shared/tables.js";
import { queueInsert, selectColumns } from "../shared/queue-insert.js";

/**
 * What a replay read of its dead letter first (`src/admin/replay-edit.ts`): an edited payload checked
 * against the job's schema, and the keys of the job's limits as the code has them now. Stored only
 * while the dead letter is still the one read: of `jobName`, replayed `replays` times.
 */
export interface ReplayEdit {
  readonly jobName: string;
  readonly replays: number;
  /** The edited payload as stored (JSON text); absent: the letter's own. */
  readonly payload?: string;
  /** Absent: the letter's own keys. */
  readonly keys?: FlowKeys;
}

/**
 * The columns a replayed job starts with: its own id, name, priority, limits and
 * keys, due now, attempt 0. `gone` is the deleted dead letter row.
 */
export const replayInsert = (t: Tables, edited: Partial<Record<"payload" | "flow_key" | "concurrency_key" | "rate_keys", string>> = {}, from = "gone g") =>
  queueInsert(t, `${selectColumns("g", {
    run_at: "now()", debounce_key: "NULL::text", created_at: "g.created_at", replays: "g.replays + 1", traceparent: "g.traceparent", ...edited,
  })} FROM ${from}`, "RETURNING id");

/** A live job with the same id, or the same name and idempotency key, would make the insert fail. */
export const liveTwin = (t: Tables, d: string) => `NOT ${noLiveTwin(t, d)}`;

/**
 * No queued or running job has the letter's id or its job's idempotency key: two probes, one per index
 * (the primary key, the idempotency index), run for each letter as it is read (a scalar subquery is never
 * made a join). So a replay by filter reads its letters in age order and stops at its limit; as anti-joins
 * the planner hashed the whole queue, and as one EXISTS with an OR it read every matching letter to sort.
 */
export const noLiveTwin = (t: Tables, d: string) =>
  `(SELECT NOT EXISTS (SELECT 1 FROM ${t.queue} q WHERE q.id = ${d}.id)
    AND NOT EXISTS (SELECT 1 FROM ${t.queue} q WHERE q.job_name = ${d}.job_name AND q.idempotency_key = ${d}.idempotency_key))`;

const conflict = (what: string) =>
  new JobsError("conflict", `${what}: a queued or running job already has its id or idempotency key`);

export const isUniqueViolation = (e: unknown): boolean =>
  typeof e === "object" && e !== null && (e as { code?: unknown }).code === "23505";

/**
 * Moves one dead letter back to the queue, due now, in ONE statement: the delete
 * and the insert share a data-modifying CTE, so two replays at once queue it
 * once (the loser finds the row gone and returns null), and a failure changes
 * nothing. Returns null when there is no such dead letter (or, with an edit, none of
 * that job any more, or, with `replays`, none replayed that many times). Throws `conflict` when a live
 * job holds its idempotency key (the dead letter stays).
 */
export const replayDeadLetter = async (db: Db, t: Tables, id: string, edit?: ReplayEdit, replays?: number): Promise<{ id: string } | null> => {
  if (!isUuid(id)) return null;
  try {
    const { rows } = await db.query<{ id: string | null; blocked: boolean }>(
      `WITH d AS (SELECT * FROM ${t.deadLetters} WHERE id = $1::uuid),
       blocked AS (SELECT 1 FROM d WHERE ${liveTwin(t, "d")}),
       gone AS (
         DELETE FROM ${t.deadLetters} x WHERE x.id = $1::uuid AND NOT EXISTS (SELECT 1 FROM blocked)
           AND ($3::text IS NULL OR x.job_name = $3::text)
           -- Only the letter as the caller saw it: once replayed it counts one more replay, so a second click (or a
           -- retried request) finds no such letter, even where the replayed job failed again and left it anew.
           AND ($7::int IS NULL OR x.replays = $7::int)
           -- And as this call read it (its keys were computed from that letter's payload).
           AND ($9::int IS NULL OR x.replays = $9::int)
         RETURNING x.*),
       queued AS (${replayInsert(t, {
         payload: "coalesce($2::jsonb, g.payload)",
         flow_key: "CASE WHEN $8::boolean THEN $4::text ELSE g.flow_key END",
         concurrency_key: "CASE WHEN $8::boolean THEN $5::text ELSE g.concurrency_key END",
         rate_keys: "CASE WHEN $8::boolean THEN $6::jsonb ELSE g.rate_keys END",
       })})
       SELECT (SELECT id::text FROM queued) AS id, EXISTS (SELECT 1 FROM blocked) AS blocked`,
      [id, edit?.payload ?? null, edit?.jobName ?? null, edit?.keys?.flow_key ?? null, edit?.keys?.concurrency_key ?? null,
        edit?.keys?.rate_keys == null ? null : JSON.stringify(edit.keys.rate_keys), replays ?? null, edit?.keys !== undefined, edit?.replays ?? null],
    );
    const row = rows[0];
    if (row?.blocked) throw conflict(`dead letter ${id} cannot be replayed`);
    return row?.id ? { id: row.id } : null;
  } catch (e) {
    // A job with the same key was enqueued between the statement's snapshot and its insert: nothing changed.
    if (isUniqueViolation(e)) throw conflict(`dead letter ${id} cannot be replayed`);
    throw e;
  }
};
