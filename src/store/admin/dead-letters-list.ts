import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { DEAD_REASONS } from "../../terms.js";
import { deadLetterSummaryJson, type DeadLetterSummary, payloadTextJoin } from "./views.js";
import { decodeCursor, type Page, pageLimit, toPage } from "../shared/paging.js";
import { onlyKeys } from "../../option-keys.js";
import { isoSql, textFilter } from "../shared/sql.js";
import { Params, type Tables } from "../shared/tables.js";

export interface ListDeadLettersQuery {
  readonly job?: string | undefined;
  /** One of `DEAD_REASONS`. */
  readonly reason?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/** A reason filter: one of DEAD_REASONS (a typo matches nothing, so it is refused rather than answered with nothing). */
export const deadReasonFilter = (value: string | undefined): string | undefined => {
  const reason = textFilter(value, "reason");
  if (reason !== undefined && !(DEAD_REASONS as readonly string[]).includes(reason)) {
    throw new JobsError("invalid_options", `reason must be one of ${DEAD_REASONS.join(", ")}`, { field: "reason" });
  }
  return reason;
};

const DEAD_LETTER_FILTERS: ReadonlyArray<keyof ListDeadLettersQuery> = ["job", "reason", "limit", "cursor"];

/**
 * Dead letters, most recent first, keyset-paginated on (dead_at, id), each with a preview of
 * its payload (`getDeadLetter` has the payload). Every filter has an index in this order (all,
 * by job, by reason, by job and reason: migrations 001 and 008), so a page reads its own rows
 * and stops, however many dead letters there are and however rare the filter's.
 */
export const listDeadLetters = async (db: Db, t: Tables, query: ListDeadLettersQuery = {}): Promise<Page<DeadLetterSummary>> => {
  onlyKeys(query, DEAD_LETTER_FILTERS, "filter");
  const limit = pageLimit(query.limit);
  const p = new Params();
  const where: string[] = [];
  const job = textFilter(query.job, "job");
  if (job !== undefined) where.push(`d.job_name = ${p.add(job)}`);
  const reason = deadReasonFilter(query.reason);
  if (reason !== undefined) where.push(`d.reason = ${p.add(reason)}`);
  if (query.cursor !== undefined) {
    const c = decodeCursor(query.cursor);
    where.push(`(d.dead_at, d.id) < (${p.add(c.at)}::timestamptz, ${p.add(c.id)}::uuid)`);
  }
  // The page's rows are chosen first, so only they have their payloads read for the preview.
  const { rows } = await db.query<{ v: DeadLetterSummary; k: string; id: string }>(
    `SELECT ${deadLetterSummaryJson("d", "p")} AS v, ${isoSql("d.dead_at")} AS k, d.id::text AS id
     FROM (SELECT * FROM ${t.deadLetters} d ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY d.dead_at DESC, d.id DESC LIMIT ${p.add(limit + 1)}) d
     ${payloadTextJoin("d", "p")}
     ORDER BY d.dead_at DESC, d.id DESC`,
    p.values,
  );
  return toPage(rows, limit);
};
