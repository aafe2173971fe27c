// The reads the scale section times, as data: each names the table whose size it follows and
// runs one read the API or the dashboard makes. Add a read here and it is measured at every level.
import type { Db } from "../../src/index.js";
import type { Page } from "../../src/store/shared/paging.js";
import type { ListRunsQuery } from "../../src/store/runs/runs-list.js";
import { RARE_JOB, RUN_OUTCOMES } from "./fill.js";

/** The library calls the routes make (a `createJobs` instance), narrowed to what the reads use. */
export interface ReadApi {
  stats(): Promise<unknown>;
  list(query?: { job?: string; status?: "queued" | "running"; cursor?: string }): Promise<Page<unknown>>;
  get(id: string): Promise<unknown>;
  readonly deadLetters: { list(query?: { job?: string; reason?: string }): Promise<Page<unknown>> };
  readonly runs: { list(query?: ListRunsQuery): Promise<Page<{ id: string }>>; get(id: string): Promise<unknown> };
}

export interface ReadContext {
  readonly api: ReadApi;
  readonly db: Db;
  readonly prefix: string;
  /** A queued job's id, and the cursor of the jobs list's first page, found after each fill. */
  readonly jobId: string;
  readonly jobsCursor: string;
}

export type ScaleTable = "queue" | "runs";

export interface ScaleRead {
  /** The route it stands for. */
  readonly name: string;
  /** Whose size the levels are: the queue (with as many dead letters), or the run history. */
  readonly table: ScaleTable;
  readonly run: (ctx: ReadContext) => Promise<unknown>;
}

const hourAgo = () => new Date(Date.now() - 3_600_000).toISOString();
/** The run newest in the history, read the way the runs page's link to it does. */
const newestRun = async (c: ReadContext) => c.api.runs.get((await c.api.runs.list({ limit: 1 })).items[0]!.id);

export const SCALE_READS: readonly ScaleRead[] = [
  { name: "GET /api/stats (dashboard overview)", table: "queue", run: (c) => c.api.stats() },
  { name: "GET /api/jobs, first page (dashboard jobs page)", table: "queue", run: (c) => c.api.list() },
  { name: "GET /api/jobs, next page (cursor)", table: "queue", run: (c) => c.api.list({ cursor: c.jobsCursor }) },
  { name: "GET /api/jobs?job=email", table: "queue", run: (c) => c.api.list({ job: "email" }) },
  { name: `GET /api/jobs?job=${RARE_JOB} (10 of them)`, table: "queue", run: (c) => c.api.list({ job: RARE_JOB }) },
  { name: "GET /api/jobs?status=running", table: "queue", run: (c) => c.api.list({ status: "running" }) },
  { name: "GET /api/dead-letters", table: "queue", run: (c) => c.api.deadLetters.list() },
  { name: "GET /api/dead-letters?reason=permanent", table: "queue", run: (c) => c.api.deadLetters.list({ reason: "permanent" }) },
  { name: "GET /api/dead-letters?reason=invalid_payload (10 of them)", table: "queue", run: (c) => c.api.deadLetters.list({ reason: "invalid_payload" }) },
  { name: "GET /api/jobs/:id", table: "queue", run: (c) => c.api.get(c.jobId) },
  { name: "GET /api/runs (newest 50)", table: "runs", run: (c) => c.api.runs.list() },
  { name: "GET /api/runs?job=email&outcome=succeeded", table: "runs", run: (c) => c.api.runs.list({ job: "email", outcome: "succeeded" }) },
  { name: `GET /api/runs?outcome=${RUN_OUTCOMES[4]}`, table: "runs", run: (c) => c.api.runs.list({ outcome: RUN_OUTCOMES[4] }) },
  { name: "GET /api/runs?job=email", table: "runs", run: (c) => c.api.runs.list({ job: "email" }) },
  { name: `GET /api/runs?job=${RARE_JOB} (10 runs)`, table: "runs", run: (c) => c.api.runs.list({ job: RARE_JOB }) },
  { name: "GET /api/runs?correlationId=order-1007", table: "runs", run: (c) => c.api.runs.list({ correlationId: "order-1007" }) },
  { name: "GET /api/runs?since=(an hour ago)", table: "runs", run: (c) => c.api.runs.list({ since: hourAgo() }) },
  { name: "GET /api/runs/:id", table: "runs", run: newestRun },
];
