import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { jobSummaryJson, type JobSummary, payloadTextJoin } from "./views.js";
import { decodeCursor, type Page, pageLimit, toPage } from "../shared/paging.js";
import { isoSql, textFilter } from "../shared/sql.js";
import { Params, type Tables } from "../shared/tables.js";

export interface ListJobsQuery {
  readonly job?: string;
  readonly status?: "queued" | "running";
  readonly limit?: number;
  readonly cursor?: string;
}

/**
 * Jobs in the queue, newest first, keyset-paginated on (created_at, id), each with
 * a preview of its payload (`getJob` has the payload). Throws `invalid_options` for
 * a bad filter or cursor.
 */
export const listJobs = async (db: Db, t: Tables, query: ListJobsQuery = {}): Promise<Page<JobSummary>> => {
  const limit = pageLimit(query.limit);
  const p = new Params();
  const where: string[] = [];
  const job = textFilter(query.job, "job");
  if (job !== undefined) where.push(`q.job_name = ${p.add(job)}`);
  if (query.status !== undefined) {
    if (query.status !== "queued" && query.status !== "running") {
      throw new JobsError("invalid_options", "status must be queued or running", { field: "status" });
    }
    where.push(`q.status = ${p.add(query.status)}`);
  }
  if (query.cursor !== undefined) {
    const c = decodeCursor(query.cursor);
    where.push(`(q.created_at, q.id) < (${p.add(c.at)}::timestamptz, ${p.add(c.id)}::uuid)`);
  }
  // The page's rows are chosen first, so only they have their payloads read for the preview.
  const { rows } = await db.query<{ v: JobSummary; k: string; id: string }>(
    `SELECT ${jobSummaryJson("q", "p")} AS v, ${isoSql("q.created_at")} AS k, q.id::text AS id
     FROM (SELECT * FROM ${t.queue} q ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
           ORDER BY q.created_at DESC, q.id DESC LIMIT ${p.add(limit + 1)}) q
     ${payloadTextJoin("q", "p")}
     ORDER BY q.created_at DESC, q.id DESC`,
    p.values,
  );
  return toPage(rows, limit);
};
