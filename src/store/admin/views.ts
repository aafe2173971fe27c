import type { WaitingOn } from "../../flow/waiting.js";
import { isoSql } from "../shared/sql.js";
import type { RunSummary } from "../runs/run-views.js";

/** A job as the API and the dashboard show it one at a time (`getJob`): with its payload. */
export interface JobView {
  readonly id: string;
  readonly job: string;
  /** Null for a finished job whose history no longer holds it. */
  readonly payload: unknown;
  /**
   * `dead` and `succeeded` only from `getJob`: the job is now a dead letter (see `reason`,
   * `deadAt`), or finished (see `output`, `finishedAt`; from the run history while it keeps it).
   */
  readonly status: "queued" | "running" | "dead" | "succeeded" | "cancelled";
  /** Null once the job has left the queue. */
  readonly runAt: string | null;
  readonly priority: number | null;
  /** Attempts started so far. */
  readonly attempt: number;
  readonly maxAttempts: number | null;
  readonly lastError: string | null;
  readonly idempotencyKey: string | null;
  readonly correlationId: string | null;
  readonly leaseExpiresAt: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly reason: string | null;
  readonly deadAt: string | null;
  /** Times it was replayed from the dead letters (it keeps its first `createdAt`). */
  readonly replays: number;
  /** A queued, due job held back by one of its limits: which, and its key. */
  readonly waitingOn?: WaitingOn | null;
  /** From `getJob`: its attempts that ended, oldest first, as the run history has them. */
  readonly attempts?: readonly RunSummary[];
  /** A succeeded job: what the handler returned (null when it returned nothing, or too much: see `outputTruncated`). */
  readonly output?: unknown;
  readonly outputTruncated?: boolean;
  /** When it succeeded or died. */
  readonly finishedAt?: string | null;
}

/** A dead letter as the API and the dashboard show it one at a time (`getDeadLetter`): with its payload. */
export interface DeadLetterView {
  readonly id: string;
  readonly job: string;
  readonly payload: unknown;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly priority: number;
  readonly reason: string;
  readonly lastError: string | null;
  readonly idempotencyKey: string | null;
  readonly correlationId: string | null;
  readonly createdAt: string;
  readonly deadAt: string;
  /** Times it was replayed before this death. */
  readonly replays: number;
}

/** Characters of a payload's JSON text that a list row carries. */
export const PAYLOAD_PREVIEW_CHARS = 300;

/**
 * What a list row says of its payload instead of the payload itself, so a page
 * stays small whatever the payloads weigh (a page of full 1 MiB payloads would
 * not fit in one Neon HTTP response). The detail routes have the payload.
 */
export interface PayloadPreview {
  /**
   * The payload's JSON text as PostgreSQL writes it (`{"to": "a@b.example"}`, a space
   * after each `:` and `,`), cut to its first 300 characters: for showing, not
   * parsing, since a cut text is not JSON.
   */
  readonly payloadPreview: string;
  /**
   * Size in bytes (UTF-8) of that whole text: a little more than the compact JSON the enqueue limit counts.
   * Null for a payload of more than 8 KB: a list does not write it out to measure it (its preview
   * is then an outline: its keys, `{"id": …, "rows": …}`, its length, `[2000 items]`, or a long string's start).
   */
  readonly payloadBytes: number | null;
  /** Whether the preview was cut (the payload is longer than the preview). */
  readonly payloadTruncated: boolean;
}

/** A row of `listJobs`: a queued or running job, its payload as a preview. */
export interface JobSummary
  extends Omit<JobView, "payload" | "status" | "runAt" | "priority" | "maxAttempts" | "attempts" | "output" | "outputTruncated" | "finishedAt">,
    PayloadPreview {
  readonly status: "queued" | "running";
  readonly runAt: string;
  readonly priority: number;
  readonly maxAttempts: number;
}

/** A row of `listDeadLetters`: a dead letter, its payload as a preview. */
export interface DeadLetterSummary extends Omit<DeadLetterView, "payload">, PayloadPreview {}

// Drivers differ on timestamps and bigints; jsonb reads the same everywhere, so rows leave as one jsonb value.
const jobFields = (q: string) => `
  'id', ${q}.id, 'job', ${q}.job_name, 'status', ${q}.status,
  'runAt', ${isoSql(`${q}.run_at`)}, 'priority', ${q}.priority, 'attempt', ${q}.attempt,
  'maxAttempts', ${q}.max_attempts, 'lastError', ${q}.last_error, 'idempotencyKey', ${q}.idempotency_key,
  'correlationId', ${q}.correlation_id, 'leaseExpiresAt', ${isoSql(`${q}.lease_expires_at`)},
  'createdAt', ${isoSql(`${q}.created_at`)}, 'updatedAt', ${isoSql(`${q}.updated_at`)},
  'reason', NULL, 'deadAt', NULL, 'replays', ${q}.replays`;

const deadLetterFields = (d: string) => `
  'id', ${d}.id, 'job', ${d}.job_name, 'attempts', ${d}.attempts,
  'maxAttempts', ${d}.max_attempts, 'priority', ${d}.priority, 'reason', ${d}.reason,
  'lastError', ${d}.last_error, 'idempotencyKey', ${d}.idempotency_key, 'correlationId', ${d}.correlation_id,
  'createdAt', ${isoSql(`${d}.created_at`)}, 'deadAt', ${isoSql(`${d}.dead_at`)}, 'replays', ${d}.replays`;

/** A queue row `q` as one jsonb value, without its payload (a reader takes that as a column of its own). */
export const jobJson = (q: string) => `jsonb_build_object(${jobFields(q)})`;

/** A dead letters row `d` as one jsonb value, without its payload (see `jobJson`). */
export const deadLetterJson = (d: string) => `jsonb_build_object(${deadLetterFields(d)})`;

/**
 * Payloads larger than this are outlined on a list, not written out whole: payload::text costs
 * about 17 ms a megabyte, and a page of 1 MB payloads, polled every 3 s, took a second a poll.
 */
const WRITTEN_OUT_BYTES = 8_192;

/**
 * A large payload's outline: its keys (`{"id": …, "rows": …}`), its length (`[2000 items]`), or a long
 * string's start. Each read of the payload decompresses it whole (about 0.2 ms a megabyte); so no value
 * inside is read: copying them out (jsonb_each) cost 1.8 ms a megabyte.
 */
const outline = (x: string) => `CASE jsonb_typeof(${x})
    WHEN 'object' THEN '{' || (SELECT string_agg(to_jsonb(k)::text || ': …', ', ') FROM (SELECT k FROM jsonb_object_keys(${x}) k LIMIT 40) ks) || '}'
    WHEN 'array' THEN '[' || jsonb_array_length(${x}) || ' items]'
    WHEN 'string' THEN to_jsonb(left(${x} #>> '{}', ${PAYLOAD_PREVIEW_CHARS}))::text
    ELSE ${x}::text END`;

/**
 * PostgreSQL's binary form of a payload of WRITTEN_OUT_BYTES of JSON is at most this: about four times
 * its text for an array of zeros, the most found (`[0, 0]` is 6 bytes of text and 22 stored).
 */
const BINARY_BOUND = 6 * WRITTEN_OUT_BYTES;

/**
 * A join that gives row `r` its payload's text once, as `<p>.t`, or for a large payload its outline
 * as `<p>.o` (OFFSET 0 keeps the planner from copying the expression into each use). Joined to the
 * page's rows only (after their LIMIT), it ships none of the payloads. Large is by the size of the
 * payload's JSON, not as stored: one of 450 KB compressed to 8 KB took 4 ms to write out, and 2 KB of
 * zeros take 12 KB in PostgreSQL's form. Only a payload whose form (decompressed: `|| '[]'` hands back
 * the value itself, or a scalar in an array) could hold that much JSON is written out to be measured.
 */
export const payloadTextJoin = (r: string, p: string) => `CROSS JOIN LATERAL (
      SELECT CASE WHEN octet_length(w.t) <= ${WRITTEN_OUT_BYTES} THEN w.t END AS t,
             CASE WHEN w.t IS NULL OR octet_length(w.t) > ${WRITTEN_OUT_BYTES} THEN ${outline(`${r}.payload`)} END AS o
      FROM (SELECT CASE WHEN pg_column_size(${r}.payload) <= ${BINARY_BOUND} AND (pg_column_compression(${r}.payload) IS NULL
              OR pg_column_size(${r}.payload || '[]'::jsonb) <= ${BINARY_BOUND}) THEN ${r}.payload::text END AS t OFFSET 0) w OFFSET 0) ${p}`;

const previewFields = (p: string) => `
  'payloadPreview', left(coalesce(${p}.t, ${p}.o), ${PAYLOAD_PREVIEW_CHARS}), 'payloadBytes', octet_length(${p}.t),
  'payloadTruncated', ${p}.t IS NULL OR octet_length(${p}.t) > octet_length(left(${p}.t, ${PAYLOAD_PREVIEW_CHARS}))`;

/** A queue row `q` as a list row, with `p` from `payloadTextJoin`. */
export const jobSummaryJson = (q: string, p: string) => `jsonb_build_object(${jobFields(q)}, ${previewFields(p)})`;

/** A dead letters row `d` as a list row, with `p` from `payloadTextJoin`. */
export const deadLetterSummaryJson = (d: string, p: string) => `jsonb_build_object(${deadLetterFields(d)}, ${previewFields(p)})`;
