// The runs list against a long history: every filter answers what a plain scan would, in
// the same order, while reading about a page of rows (checked in the plan, not by timing).
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type Db, defineJob } from "../src/index.js";
import { listRuns, type ListRunsQuery } from "../src/store/runs/runs-list.js";
import { encodeCursor } from "../src/store/shared/paging.js";
import { tablesFor } from "../src/store/shared/tables.js";
import { harness } from "./support/harness.js";

const h = await harness("runs_list");
const jobs = await h.isolated([]);
const t = tablesFor(jobs.settings.tablePrefix);
const ROWS = 200_000;

// 20 job names; 1 run in 50 failed (retried, dead or requeued); 1 in 100 has a correlation id;
// one run a second over the last ~55 hours; ids with gaps where retention or rollbacks left them.
await h.rows(
  `INSERT INTO ${t.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms, correlation_id, idempotency_key)
   SELECT gen_random_uuid(), 'job-' || (i % 20), 1,
          CASE WHEN i % 50 = 0 THEN (ARRAY['retried', 'dead_lettered', 'requeued'])[1 + (i / 50) % 3] ELSE 'succeeded' END,
          now() - ($1 - i) * interval '1 second', 5,
          CASE WHEN i % 100 = 0 THEN 'c-' || (i % 700) END, CASE WHEN i % 1000 = 0 THEN 'k-' || i END
   FROM generate_series(1, $1) i`,
  [ROWS],
);
await h.rows(`DELETE FROM ${t.runs} WHERE id % 7 = 3 AND id % 11 = 5`);
await h.rows(`ANALYZE ${t.runs}`);

/** What the answer must be: the same filter as a plain scan. */
const naive = async (q: ListRunsQuery, limit: number, on = t) => {
  const where: string[] = [];
  const v: unknown[] = [];
  const add = (sql: string, value: unknown) => (v.push(value), where.push(sql.replace("?", `$${v.length}`)));
  if (q.job) add("job_name = ?", q.job);
  if (q.outcome) add("outcome = ?", q.outcome);
  if (q.correlationId) add("correlation_id = ?", q.correlationId);
  if (q.idempotencyKey) add("idempotency_key = ?", q.idempotencyKey);
  if (q.since) add("finished_at >= ?::timestamptz", q.since);
  if (q.until) add("finished_at < ?::timestamptz", q.until);
  const rows = await h.rows<{ id: string }>(`SELECT r.id::text AS id FROM ${on.runs} r ${where.length ? `WHERE ${where.join(" AND ")}` : ""} ORDER BY r.id DESC LIMIT ${limit}`, v);
  return rows.map((r) => r.id);
};

/** The statement the list sends, captured, so its plan can be read. */
const planOf = async (q: ListRunsQuery, on = t) => {
  let captured: { text: string; params: readonly unknown[] } | undefined;
  const spy: Db = { query: (text, params = [], o) => ((captured = { text, params }), h.db.query(text, params, o)) } as Db;
  await listRuns(spy, on, q);
  const [row] = await h.rows<{ "QUERY PLAN": Array<{ Plan: Node }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${captured!.text}`, [...captured!.params]);
  return row!["QUERY PLAN"][0]!.Plan;
};
interface Node {
  "Node Type": string;
  "Relation Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: Node[];
}
const scans = (n: Node): Node[] => [...(n["Relation Name"] ? [n] : []), ...(n.Plans ?? []).flatMap(scans)];

const hour = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
const QUERIES: Array<[string, ListRunsQuery]> = [
  ["everything", {}],
  ["one job", { job: "job-7" }],
  ["succeeded", { outcome: "succeeded" }],
  ["dead letters", { outcome: "dead_lettered" }],
  ["one job's retries", { job: "job-0", outcome: "retried" }],
  ["a correlation id", { correlationId: "c-300" }],
  ["an idempotency key", { idempotencyKey: "k-150000" }],
  ["an hour two days ago", { since: hour(49), until: hour(48) }],
  ["since an hour ago, one job", { since: hour(1), job: "job-3" }],
  ["until a day ago, failures", { until: hour(24), outcome: "requeued" }],
];

describe("listRuns over a long history", () => {
  it.each(QUERIES)("%s: the same runs as a plain scan, newest first, across pages", async (_name, q) => {
    const want = await naive(q, 120);
    const got: string[] = [];
    let cursor: string | undefined;
    while (got.length < 120) {
      const page = await listRuns(h.db, t, { ...q, limit: 50, cursor });
      got.push(...page.items.map((r) => r.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(got.slice(0, 120)).toEqual(want);
  });

  it.each(QUERIES)("%s: reads about a page of rows, never the table", async (_name, q) => {
    const plan = await planOf({ ...q, limit: 50 });
    for (const s of scans(plan)) {
      expect(s["Node Type"]).not.toBe("Seq Scan");
      // Rows any one scan read, kept or filtered out (per loop, as EXPLAIN counts them).
      const read = (s["Actual Rows"] + (s["Rows Removed by Filter"] ?? 0) + (s["Rows Removed by Index Recheck"] ?? 0)) * s["Actual Loops"];
      expect({ relation: s["Relation Name"], read: read < 5_000 ? "bounded" : read }).toEqual({ relation: s["Relation Name"], read: "bounded" });
    }
  });
});

/** Every page of a query, as ids. */
const allPages = async (q: ListRunsQuery, most: number, on = t) => {
  const got: string[] = [];
  let cursor: string | undefined;
  while (got.length < most) {
    const page = await listRuns(h.db, on, { ...q, limit: 50, cursor });
    got.push(...page.items.map((r) => r.id));
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return got.slice(0, most);
};

/** No scan read more than a few pages' worth of rows. */
const expectBounded = (plan: Node) => {
  for (const s of scans(plan)) {
    expect(s["Node Type"]).not.toBe("Seq Scan");
    // Rows any one scan read, kept or filtered out (per loop, as EXPLAIN counts them).
    const read = (s["Actual Rows"] + (s["Rows Removed by Filter"] ?? 0) + (s["Rows Removed by Index Recheck"] ?? 0)) * s["Actual Loops"];
    expect({ relation: s["Relation Name"], read: read < 5_000 ? "bounded" : read }).toEqual({ relation: s["Relation Name"], read: "bounded" });
  }
};

// One job's runs (and every failure) all older than 100,000 runs of another, which all succeeded: the
// planner, taking the filters for spread evenly over the ids, walked the primary key past every newer
// run to find a page of the old ones' (a million read for a page of 50, some hundreds of ms).
describe("listRuns when the filter's runs are all older than the rest", () => {
  let skewed = t;
  beforeAll(async () => {
    skewed = tablesFor((await h.isolated([])).settings.tablePrefix);
    // 30,000 runs over hours 80 to 72 ago, every third of `audit` and the rest of `email`, 1 in 20 retried,
    // some with keys; then 100,000 of `bulk`, all succeeded. The planner takes `audit` for spread over all ids.
    await h.rows(
      `INSERT INTO ${skewed.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms, correlation_id, idempotency_key)
       SELECT gen_random_uuid(), CASE WHEN i % 3 = 0 THEN 'audit' ELSE 'email' END, 1, CASE WHEN i % 20 = 0 THEN 'retried' ELSE 'succeeded' END,
              now() - interval '80 hours' + i * interval '0.96 seconds', 5, CASE WHEN i % 100 = 0 THEN 'c-' || (i % 7) END, CASE WHEN i % 500 = 0 THEN 'k-' || i END
       FROM generate_series(1, 30000) i`,
    );
    await h.rows(
      `INSERT INTO ${skewed.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms)
       SELECT gen_random_uuid(), 'bulk', 1, 'succeeded', now() - interval '60 hours' + i * interval '2 seconds', 5 FROM generate_series(1, 100000) i`,
    );
    await h.rows(`ANALYZE ${skewed.runs}`);
  });
  const QUERIES: Array<[string, ListRunsQuery]> = [
    ["the old job", { job: "audit" }],
    ["the old job's succeeded runs", { job: "audit", outcome: "succeeded" }],
    ["the old job's retries", { job: "audit", outcome: "retried" }],
    ["retries", { outcome: "retried" }],
    ["retries in the last two days (none)", { outcome: "retried", since: hour(48) }],
    ["retries in an hour three days ago", { outcome: "retried", since: hour(73), until: hour(72) }],
    ["the old job in the last two days (none)", { job: "audit", since: hour(48) }],
    ["an old correlation id", { correlationId: "c-7" }],
    ["an old idempotency key", { idempotencyKey: "k-500" }],
  ];

  it.each(QUERIES)("%s: the same runs as a plain scan, reading about a page of rows", async (_name, q) => {
    expect(await allPages(q, 120, skewed)).toEqual(await naive(q, 120, skewed));
    expectBounded(await planOf({ ...q, limit: 50 }, skewed));
  });
});

describe("listRuns cursors", () => {
  it("takes back only its own cursors: another list's, a tampered one or garbage is invalid_options on cursor", async () => {
    const { nextCursor } = await listRuns(h.db, t, { limit: 2 });
    expect((await listRuns(h.db, t, { limit: 2, cursor: nextCursor! })).items).toHaveLength(2);
    const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    const others = [
      encodeCursor("2026-12-01T09:30:00.000000Z", crypto.randomUUID()), // the jobs and dead-letter lists'
      b64(["run", "12abc"]),
      b64(["run", "1", "2"]),
      b64(["job", "1"]),
      "not a cursor!",
      "x".repeat(101),
    ];
    for (const cursor of others) {
      await expect(listRuns(h.db, t, { cursor })).rejects.toMatchObject({ code: "invalid_options", details: { field: "cursor" } });
    }
  });
});

describe("listRuns on a large history", () => {
  it("is read serially: with parallel plans made free, a time range still starts no workers", async () => {
    let captured: { text: string; params: readonly unknown[] } | undefined;
    const spy: Db = { query: (text, params = [], o) => ((captured = { text, params }), h.db.query(text, params, o)) } as Db;
    // The last half minute: a few dozen runs, so the planner expects to walk much of the table for a page.
    await listRuns(spy, t, { since: hour(30 / 3600), limit: 50 });
    const client = await h.main.connect();
    try {
      await client.query("BEGIN");
      // What the planner would do on a history large enough to make workers look worth it.
      for (const s of ["parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0", "min_parallel_index_scan_size = 0"]) {
        await client.query(`SET LOCAL ${s}`);
      }
      const { rows } = await client.query<{ "QUERY PLAN": Array<{ Plan: Node }> }>(`EXPLAIN (FORMAT JSON) ${captured!.text}`, [...captured!.params]);
      const types = (n: Node): string[] => [n["Node Type"], ...(n.Plans ?? []).flatMap(types)];
      expect(types(rows[0]!["QUERY PLAN"][0]!.Plan).filter((n) => n.startsWith("Gather"))).toEqual([]);
    } finally {
      await client.query("ROLLBACK");
      client.release();
    }
  });
});

describe("listRuns time range to the microsecond", () => {
  it("takes since and until as precise as the finishedAt it returns", async () => {
    const own = await h.isolated([]);
    const r = tablesFor(own.settings.tablePrefix);
    await h.rows(
      `INSERT INTO ${r.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms)
       VALUES (gen_random_uuid(), 'a', 1, 'succeeded', '2026-12-01T09:30:00.123100Z', 1),
              (gen_random_uuid(), 'b', 1, 'succeeded', '2026-12-01T09:30:00.123900Z', 1)`,
    );
    const all = await listRuns(h.db, r, {});
    const b = all.items.find((x) => x.job === "b")!;
    expect(b.finishedAt).toBe("2026-12-01T09:30:00.123900Z");
    expect((await listRuns(h.db, r, { until: b.finishedAt })).items.map((x) => x.job)).toEqual(["a"]);
    expect((await listRuns(h.db, r, { since: b.finishedAt })).items.map((x) => x.job)).toEqual(["b"]);
    expect((await listRuns(h.db, r, { since: "2026-12-01T10:30:00.1231+01:00" })).items.map((x) => x.job)).toEqual(["b", "a"]);
  });
});

describe("succeeded runs crowded out by failures", () => {
  it("a page reads at most 4,000 runs (it read every newer failure), and its cursor reads on to every succeeded run", async () => {
    const other = await h.isolated([]);
    const t2 = tablesFor(other.settings.tablePrefix);
    const insert = (outcome: string, n: number) =>
      h.rows(`INSERT INTO ${t2.runs} (job_id, job_name, attempt, outcome, finished_at, duration_ms)
              SELECT gen_random_uuid(), 'broken', 1, $1, now(), 5 FROM generate_series(1, $2)`, [outcome, n]);
    await insert("succeeded", 100);
    await insert("retried", 20_000);
    await h.rows(`ANALYZE ${t2.runs}`);
    const want = (await h.rows<{ id: string }>(`SELECT r.id::text AS id FROM ${t2.runs} r WHERE r.outcome = 'succeeded' ORDER BY r.id DESC`)).map((r) => r.id);
    const got: string[] = [];
    let pages = 0;
    let cursor: string | undefined;
    for (;;) {
      const page = await listRuns(h.db, t2, { outcome: "succeeded", job: pages % 2 === 0 ? undefined : "broken", limit: 50, cursor });
      pages++;
      got.push(...page.items.map((r) => r.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(got).toEqual(want);
    expect(pages).toBeLessThanOrEqual(8);
    let captured: { text: string; params: readonly unknown[] } | undefined;
    const spy: Db = { query: (text, params = [], o) => ((captured = { text, params }), h.db.query(text, params, o)) } as Db;
    for (const q of [{ outcome: "succeeded" as const }, { outcome: "succeeded" as const, job: "broken" }]) {
      await listRuns(spy, t2, { ...q, limit: 50 });
      const [row] = await h.rows<{ "QUERY PLAN": Array<{ Plan: Node }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${captured!.text}`, [...captured!.params]);
      for (const s of scans(row!["QUERY PLAN"][0]!.Plan)) {
        const read = (s["Actual Rows"] + (s["Rows Removed by Filter"] ?? 0)) * s["Actual Loops"];
        expect(read, `${JSON.stringify(q)} ${s["Relation Name"]}`).toBeLessThanOrEqual(4_000);
      }
    }
  });
});

describe("a job name as a filter", () => {
  it("every name defineJob takes filters the jobs, runs and dead letters (a name of 128 astral characters is 256 UTF-16 units)", async () => {
    const name = "😀".repeat(128);
    const job = defineJob({ name, schema: z.object({}), maxAttempts: 1, handler: () => {} });
    const jobs = await h.isolated([job]);
    await jobs.enqueue(name, {});
    expect((await jobs.list({ job: name })).items).toHaveLength(1);
    await jobs.tick({ budgetMs: 2_000 });
    expect((await jobs.runs.list({ job: name })).items).toHaveLength(1);
    expect((await jobs.deadLetters.list({ job: name })).items).toHaveLength(0);
    // Past 255 characters (code points, as PostgreSQL counts them), still refused.
    await expect(jobs.list({ job: "😀".repeat(256) })).rejects.toMatchObject({ code: "invalid_options" });
  });
});
