import type { Db } from "../../db.js";
import { JobsError } from "../../errors.js";
import { jobSummaryJson, type JobSummary, payloadTextJoin } from "./views.js";
import { decodeCursor, type Page, pageLimit, toPage } from "../shared/paging.js";
import { onlyKeys } from "../../option-keys.js";
import { isoSql, textFilter } from "../shared/sql.js";
import { Params, type Tables } from "../shared/tables.js";

export interface ListJobsQuery {
  readonly job?: string | undefined;
  readonly status?: "queued" | "running" | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

/**
 * Jobs in the queue, newest first (job ids are time-ordered UUIDv7), keyset-paginated on id, each
 * with a preview of its payload (`getJob` has the payload). Throws `invalid_options` for a bad
 * filter or cursor. Every page is read along an index in its order and stops after the page:
 * all jobs, or queued ones, along the primary key (skipping only the few running rows); one job's
 * queued jobs along its partial index, merged with its running ones; running jobs along the lease
 * index (there are at most the ticks' concurrency of them), sorted.
 */
const JOB_FILTERS: ReadonlyArray<keyof ListJobsQuery> = ["job", "status", "limit", "cursor"];

export const listJobs = async (db: Db, t: Tables, query: ListJobsQuery = {}): Promise<Page<JobSummary>> => {
  onlyKeys(query, JOB_FILTERS, "filter");
  const limit = pageLimit(query.limit);
  const p = new Params();
  const job = textFilter(query.job, "job");
  const status = query.status;
  if (status !== undefined && status !== "queued" && status !== "running") {
    throw new JobsError("invalid_options", "status must be queued or running", { field: "status" });
  }
  const cond: string[] = [];
  const name = job !== undefined ? p.add(job) : undefined;
  if (name !== undefined) cond.push(`q.job_name = ${name}`);
  // The cursor's time is not needed: ids alone order the list (and a cursor from before ids were
  // time-ordered still continues below its id, with no repeat or gap).
  const below = query.cursor !== undefined ? `${p.add(decodeCursor(query.cursor).id)}::uuid` : undefined;
  if (below !== undefined) cond.push(`q.id < ${below}`);
  const take = p.add(limit + 1);
  const where = (...extra: string[]) => {
    const all = [...extra, ...cond];
    return all.length > 0 ? `WHERE ${all.join(" AND ")}` : "";
  };
  // One job's queued jobs: along its index, bounded by ranges alone. With the name as an equality the
  // planner could walk the primary key instead, past every newer job of other names.
  const byName = name === undefined ? cond : [`q.job_name >= ${name}`, below === undefined ? `q.job_name <= ${name}` : `(q.job_name, q.id) < (${name}, ${below})`];
  const queued = `SELECT * FROM ${t.queue} q WHERE ${["q.status = 'queued'", ...byName].join(" AND ")} ORDER BY ${name === undefined ? "" : "q.job_name DESC, "}q.id DESC LIMIT ${take}`;
  // OFFSET 0 keeps the order out of the subquery, so the running rows come from the lease index
  // and are sorted, never found by walking the primary key past every queued job.
  const running = `SELECT * FROM (SELECT * FROM ${t.queue} q ${where("q.status = 'running'")} OFFSET 0) q ORDER BY q.id DESC LIMIT ${take}`;
  const page =
    status === "queued" ? queued
    : status === "running" ? running
    : job === undefined ? `SELECT * FROM ${t.queue} q ${where()} ORDER BY q.id DESC LIMIT ${take}`
    : `SELECT * FROM ((${queued}) UNION ALL (${running})) q ORDER BY q.id DESC LIMIT ${take}`;
  // The page's rows are chosen first, so only they have their payloads read for the preview.
  const { rows } = await db.query<{ v: JobSummary; k: string; id: string }>(
    `SELECT ${jobSummaryJson("q", "p")} AS v, ${isoSql("q.created_at")} AS k, q.id::text AS id
     FROM (${page}) q
     ${payloadTextJoin("q", "p")}
     ORDER BY q.id DESC`,
    p.values,
  );
  return toPage(rows, limit);
};
