import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { isoSql, isUuid, textFilter } from "../shared/sql.js";
import { deadReasonFilter } from "./dead-letters-list.js";
import { isUniqueViolation, liveTwin, noLiveTwin, replayInsert } from "./replay.js";
import { COUNT_LIMIT } from "../shared/bounded.js";
import { decodeWalkCursor, encodeWalkCursor } from "../shared/paging.js";
import { Params, type Tables } from "../shared/tables.js";
import type { FlowKeys } from "../../flow/keys.js";

export const MAX_BULK_REPLAY = 1_000;
const FILTER_KEYS = ["job", "reason", "limit", "cursor"];

/**
 * What is left for a next call, counted in the statement's snapshot (where the letters it deleted
 * are still seen): neither replayed now nor sharing a key with a letter replayed now, which holds
 * that key from then on, inside this call's selection or past it.
 */
const NOT_REPLAYED_NOR_HELD = `d.id NOT IN (SELECT id FROM gone)
  AND (d.idempotency_key IS NULL OR (d.job_name, d.idempotency_key) NOT IN (
    SELECT g.job_name, g.idempotency_key FROM gone g WHERE g.idempotency_key IS NOT NULL))`;

/**
 * The most letters one call by filter reads past its cursor: letters a live job holds are passed over,
 * and without a bound a call read every one of them (100,000 held letters, 100,000 pairs of probes) to
 * find its first free one. A call stopped by it returns a cursor to go on from.
 */
export const MAX_EXAMINED = 10_000;

/** Which dead letters to replay: these ids, or the oldest `limit` matching a filter (a job, a reason, both) past `cursor`. */
export type BulkReplaySelector =
  | { readonly ids: readonly string[] }
  | { readonly job?: string | undefined; readonly reason?: string | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined };

export interface BulkReplayResult {
  /** Ids now queued again (a dead letter keeps its job's id). */
  readonly replayed: string[];
  /** Ids not replayed: `not_found` (no such dead letter, or replayed meanwhile), `conflict` (a live job holds its id or key). */
  readonly skipped: Array<{ id: string; reason: "not_found" | "conflict" | "invalid_options"; message?: string }>;
  /**
   * By filter: of the next 10,000 dead letters matching past `nextCursor`, those a call could replay
   * (letters whose id or key a live job holds are passed over and not counted). 0 by ids.
   */
  readonly remaining: number;
  /**
   * By filter: pass back as `cursor` to go on (the call stopped at its limit, or after reading 10,000
   * letters); null once a call has read to the end (a call that stopped at its limit on the last letter
   * returns one, and the next call null). Always null by ids.
   */
  readonly nextCursor: string | null;
}

/** A letter's keys for its replay (`keys` absent: its own), or why it stays where it is (`refused`). */
export type LetterKeys = { readonly keys?: FlowKeys } | { readonly refused: string };

/** Keys computed again for the replayed letters of `jobs` (those with limits in code now) and for keyed ones. */
export interface ReplayRekey {
  readonly jobs: readonly string[];
  readonly keysOf: (jobName: string, payload: unknown, id: string) => LetterKeys;
}

/**
 * Replays many dead letters in ONE statement (delete + insert in a CTE). Dead
 * letters whose id or idempotency key a live job holds stay where they are; of
 * several with one key, only the newest is replayed. (With limits in code, see
 * replay-rekey.ts: their keys are computed again first.)
 */
export const bulkReplay = (db: Db, t: Tables, selector: BulkReplaySelector): Promise<BulkReplayResult> => replayStep(db, t, selector);

export type Keyed = { id: string; job: string; replays: number; payload?: unknown } & LetterKeys;

export interface Phase {
  readonly rekey: ReplayRekey;
  /** A walk's start as the read saw it (its replay must select no letter the read did not). */
  readonly began?: string;
  /** Absent: the read (what the replay would select, with payloads); present: the replay, with their keys. */
  readonly keyed?: readonly Keyed[];
}

/**
 * What a read before a replay with keys found, in the order the replay takes them: the letters of `covered`
 * (as many as READ_BYTES of payloads allow, at least one) with the payloads of those whose keys are computed
 * again, and how many the replay would have selected (`picked`; more than covered: the read was cut short).
 */
export type Read = { letters: Array<{ id: string; job: string; replays: number; payload: unknown }>; covered: string[]; picked: number; began: string | null };

/** The most payload text a read before a replay brings into the app (Neon's HTTP endpoint answers 10 MiB at most). */
export const READ_BYTES = 4 * 1024 * 1024;

export async function replayStep(db: Db, t: Tables, selector: BulkReplaySelector): Promise<BulkReplayResult>;
export async function replayStep(db: Db, t: Tables, selector: BulkReplaySelector, phase: Phase): Promise<BulkReplayResult | Read | { stale: true }>;
export async function replayStep(db: Db, t: Tables, selector: BulkReplaySelector, phase?: Phase): Promise<BulkReplayResult | Read | { stale: true }> {
  const p = new Params();
  let pick: string;
  let requested: string[] = [];
  // By filter: where the call stopped (its last replayed letter, or the last it read), and what is left past it.
  let walked = "";
  let stop = "";
  let began = "NULL::timestamptz";
  let next = "NULL::text AS next_at, NULL::text AS next_id, 0 AS remaining";
  const reading = phase !== undefined && phase.keyed === undefined;
  if (typeof selector !== "object" || selector === null) {
    throw new JobsError("invalid_options", "give the dead letters to replay: { ids } or a filter { job?, reason?, limit?, cursor? }");
  }
  // A misspelt filter (`jobb`, `reasons`, `id`) would be no filter: every job's dead letters replayed.
  const unknown = Object.keys(selector).filter((k) => !("ids" in selector ? ["ids"] : FILTER_KEYS).includes(k));
  if (unknown.length > 0) {
    throw new JobsError("invalid_options", `unknown selector ${JSON.stringify(unknown[0])}: give { ids } or a filter { job?, reason?, limit?, cursor? }`, { field: unknown[0] });
  }
  if ("ids" in selector) {
    if (!Array.isArray(selector.ids) || selector.ids.length === 0 || selector.ids.length > MAX_BULK_REPLAY) {
      throw new JobsError("invalid_options", `ids must be a list of 1 to ${MAX_BULK_REPLAY} dead letter ids`, { field: "ids" });
    }
    requested = [...new Set(selector.ids.map((id) => (typeof id === "string" ? id.toLowerCase() : String(id))))];
    const valid = requested.filter(isUuid);
    pick = `SELECT d.id FROM ${t.deadLetters} d WHERE d.id IN (SELECT (value #>> '{}')::uuid FROM jsonb_array_elements(${p.json(valid)}))`;
  } else {
    const job = textFilter(selector.job, "job");
    const reason = deadReasonFilter(selector.reason);
    let limit = MAX_BULK_REPLAY;
    if (selector.limit !== undefined) {
      if (!Number.isInteger(selector.limit) || selector.limit < 1 || selector.limit > MAX_BULK_REPLAY) {
        throw new JobsError("invalid_options", `limit must be an integer from 1 to ${MAX_BULK_REPLAY}`, { field: "limit" });
      }
      limit = selector.limit;
    }
    const after = selector.cursor !== undefined ? decodeWalkCursor(selector.cursor) : undefined;
    // Letters dead since the walk began are not its own: a replayed one that failed again got a new dead_at,
    // past the cursor, and a walk that followed its cursors replayed every letter again and again.
    began = `coalesce(${p.add(phase?.began ?? after?.began ?? null)}::timestamptz, now())`;
    const match = [
      job !== undefined ? `d.job_name = ${p.add(job)}` : "",
      reason !== undefined ? `d.reason = ${p.add(reason)}` : "",
      `d.dead_at <= ${began}`,
    ].filter(Boolean);
    const past = (at: string, id: string) => [...match, `(d.dead_at, d.id) > (${at}::timestamptz, ${id}::uuid)`].join(" AND ");
    const from = after ? past(p.add(after.at), p.add(after.id)) : match.join(" AND ");
    // The letters past the cursor in age order, along an index, at most MAX_EXAMINED of them (`walked`), read
    // only as far as the limit needs (a CTE is made as it is read, and read in the order it is made): letters
    // a live job blocks are passed over (the oldest thousand, all blocked, came back on every call), and the
    // bound keeps a call's reading bounded however many they are. The limit as a subquery the planner cannot
    // see: with a value it may plan to read every matching letter and sort them, for a job and a reason.
    const walk = (where: string, bound: string) =>
      `SELECT d.id, d.dead_at, d.job_name, d.idempotency_key FROM ${t.deadLetters} d WHERE ${where} ORDER BY d.dead_at, d.id LIMIT (SELECT ${bound}::int)`;
    const examined = p.add(MAX_EXAMINED);
    const limitParam = p.add(limit);
    walked = `walked AS MATERIALIZED (${walk(from, examined)}),
       `;
    pick = `SELECT w.id, w.dead_at FROM walked w WHERE ${noLiveTwin(t, "w")} LIMIT ${limitParam}`;
    // Full: on from its last replayed letter. Short: it read every letter it may; on from the last of
    // them if that was all it may read, else it read to the end: done.
    // (Not in the read before a replay with keys: its parameters appear in the text only where it is used.)
    if (!reading) next = `(SELECT ${isoSql("s.at")} FROM stop s) AS next_at, (SELECT s.id::text FROM stop s) AS next_id, ${isoSql(began)} AS began,
      (SELECT count(*) FROM (SELECT d.* FROM stop s CROSS JOIN LATERAL (${walk(past("s.at", "s.id"), p.add(COUNT_LIMIT))}) d) d
       WHERE ${noLiveTwin(t, "d")} AND ${NOT_REPLAYED_NOR_HELD})::int AS remaining`;
    stop = `,
       stop AS (
         SELECT x.at, x.id FROM (
           SELECT k.dead_at AS at, k.id, 1 AS o FROM pick k WHERE (SELECT count(*) FROM pick) >= ${limitParam}
           UNION ALL
           SELECT w.dead_at, w.id, 2 FROM walked w
           WHERE (SELECT count(*) FROM pick) < ${limitParam} AND (SELECT count(*) FROM walked) >= ${examined}::int
         ) x ORDER BY x.o, x.at DESC, x.id DESC LIMIT 1)`;
  }
  if (reading) {
    const rekeyed = `(d.job_name = ANY (${p.add(phase!.rekey.jobs)}::text[]) OR d.flow_key IS NOT NULL)`;
    // In the replay's order (by filter, its walk's), cut where the payloads to read pass READ_BYTES.
    const { rows } = await db.query<Read>(
      `WITH ${walked}pick AS (${pick}),
       sized AS (
         SELECT d.id, d.job_name, d.replays, d.dead_at, ${rekeyed} AS need,
                sum(CASE WHEN ${rekeyed} THEN octet_length(d.payload::text) ELSE 0 END) OVER (ORDER BY d.dead_at, d.id) AS upto,
                row_number() OVER (ORDER BY d.dead_at, d.id) AS n
         FROM ${t.deadLetters} d WHERE d.id = ANY (ARRAY(SELECT id FROM pick))),
       covered AS (SELECT * FROM sized WHERE upto <= ${p.add(READ_BYTES)} OR n = 1)
       SELECT coalesce((SELECT json_agg(json_build_object('id', c.id, 'job', c.job_name, 'replays', c.replays, 'payload', d.payload) ORDER BY c.n)
         FROM covered c JOIN ${t.deadLetters} d ON d.id = c.id WHERE c.need), '[]'::json) AS letters,
         coalesce((SELECT json_agg(c.id ORDER BY c.n) FROM covered c), '[]'::json) AS covered,
         (SELECT count(*) FROM sized)::int AS picked, ${isoSql(began)} AS began`,
      p.values,
    );
    return rows[0] ?? { letters: [], covered: [], picked: 0, began: null };
  }
  // The letters' keys, for the letters as read (a letter replayed and dead again since has more replays).
  const keys = phase?.keyed
    ? `keys AS (SELECT * FROM jsonb_to_recordset(${p.json(phase.keyed.map((k) => ({
        id: k.id, replays: k.replays, refused: "refused" in k, keep: !("refused" in k) && k.keys === undefined,
        ...("keys" in k && k.keys ? { ...k.keys } : {}),
      })))}) AS k(id uuid, replays int, refused boolean, keep boolean, flow_key text, concurrency_key text, rate_keys jsonb)),
       stale AS (SELECT 1 FROM sel s WHERE (s.job_name = ANY (${p.add(phase.rekey.jobs)}::text[]) OR s.flow_key IS NOT NULL)
         AND NOT EXISTS (SELECT 1 FROM keys k WHERE k.id = s.id AND k.replays = s.replays)),
       `
    : "";
  const refusals = new Map(phase?.keyed?.flatMap((k) => ("refused" in k ? [[k.id, k.refused] as const] : [])) ?? []);
  const rekeyedColumn = (c: "flow_key" | "concurrency_key" | "rate_keys") => `CASE WHEN k.id IS NULL OR k.keep THEN g.${c} ELSE k.${c} END`;
  // `sel` locks the letters in id order, as a discard of many locks them (the tick's cleanup passes over held
  // ones): in the plan's order, a replay by ids and one by filter crossing the same letters deadlocked. A letter
  // replayed or discarded meanwhile is passed over (not_found).
  try {
    const { rows } = await db.query<{ replayed: string[]; blocked: string[]; remaining: number; next_at: string | null; next_id: string | null; began?: string; stale: boolean }>(
      `WITH ${walked}pick AS (${pick})${stop},
       sel AS (
         SELECT d.id, d.job_name, d.idempotency_key, d.dead_at, d.replays, d.flow_key FROM ${t.deadLetters} d
         WHERE d.id = ANY (ARRAY(SELECT id FROM pick)) ORDER BY d.id FOR UPDATE),
       ${keys}
       blocked AS (
         SELECT s.id FROM sel s WHERE ${liveTwin(t, "s")}
         UNION
         SELECT r.id FROM (
           SELECT s.id, row_number() OVER (PARTITION BY s.job_name, s.idempotency_key ORDER BY s.dead_at DESC, s.id DESC) AS n
           FROM sel s WHERE s.idempotency_key IS NOT NULL) r
         WHERE r.n > 1),
       gone AS (
         DELETE FROM ${t.deadLetters} x
         WHERE x.id = ANY (ARRAY(SELECT id FROM sel)) AND x.id NOT IN (SELECT id FROM blocked)${keys ? `
           AND x.id NOT IN (SELECT id FROM keys WHERE refused) AND NOT EXISTS (SELECT 1 FROM stale)` : ""}
         RETURNING x.*),
       queued AS (${keys
         ? replayInsert(t, { flow_key: rekeyedColumn("flow_key"), concurrency_key: rekeyedColumn("concurrency_key"), rate_keys: rekeyedColumn("rate_keys") }, "gone g LEFT JOIN keys k ON k.id = g.id")
         : replayInsert(t)})
       SELECT coalesce((SELECT jsonb_agg(id::text) FROM queued), '[]'::jsonb) AS replayed,
              coalesce((SELECT jsonb_agg(id::text) FROM blocked), '[]'::jsonb) AS blocked,
              ${keys ? "EXISTS (SELECT 1 FROM stale)" : "false"} AS stale,
              ${next}`,
      p.values,
    );
    const row = rows[0] ?? { replayed: [], blocked: [], remaining: 0, next_at: null, next_id: null, stale: false };
    if (row.stale) return { stale: true };
    const replayed = new Set(row.replayed);
    const blocked = new Set(row.blocked);
    const skipped: BulkReplayResult["skipped"] = [...blocked].map((id) => ({ id, reason: "conflict" }));
    for (const [id, message] of refusals) if (!blocked.has(id)) skipped.push({ id, reason: "invalid_options", message });
    for (const id of requested) if (!replayed.has(id) && !blocked.has(id) && !refusals.has(id)) skipped.push({ id, reason: "not_found" });
    const nextCursor = row.next_at !== null && row.next_id !== null && row.began ? encodeWalkCursor(row.next_at, row.next_id, row.began) : null;
    return { replayed: row.replayed, skipped, remaining: row.remaining, nextCursor };
  } catch (e) {
    if (isUniqueViolation(e)) {
      throw new JobsError("conflict", "a job with the same idempotency key was enqueued meanwhile; nothing was replayed, try again");
    }
    throw e;
  }
}
