// Reads that stay fast as the tables grow, checked on the plans rather than the clock: with
// 200,000 jobs in the queue and 200,000 dead letters, every statement the stats, the lists and
// the lookups send reads along an index and stops early. EXPLAIN ANALYZE counts the rows each
// scan of the queue or the dead letters actually read; no statement may read a whole table, nor
// more than a bounded number of rows of either.
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../src/index.js";
import { getDeadLetter } from "../src/store/admin/dead-letter-get.js";
import { listDeadLetters, type ListDeadLettersQuery } from "../src/store/admin/dead-letters-list.js";
import { getJob } from "../src/store/admin/job-get.js";
import { listJobs, type ListJobsQuery } from "../src/store/admin/jobs-list.js";
import { getStats } from "../src/store/admin/stats.js";
import { harness } from "./support/harness.js";

const h = await harness("scale_reads");
const t = h.make([]).tables;
const ROWS = 200_000;
// What one statement may read of either table: the stats count two jobs up to 10,001 each.
const BUDGET = 30_000;

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

/**
 * Rows the scans of the queue and the dead letters read in one statement (returned or filtered
 * out, over every loop), and their sequential scans. Small tables of fixed size (the 256 tick
 * slots, the state row) may be scanned.
 */
const readsOf = (plan: PlanNode) => {
  const read = new Map<string, number>();
  const seqScans: string[] = [];
  const walk = (node: PlanNode) => {
    const table = node["Relation Name"];
    if (table === t.queue || table === t.deadLetters) {
      const perLoop = node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Index Recheck"] ?? 0);
      read.set(table, (read.get(table) ?? 0) + perLoop * node["Actual Loops"]);
      if (node["Node Type"] === "Seq Scan") seqScans.push(table);
    }
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(plan);
  return { read, seqScans };
};

const ids = { queued: "", dead: "" };

beforeAll(async () => {
  // Three jobs: "big" fills the queue, "mid" has exactly the count limit, "rare" a few; running rows are few.
  await h.db.query(
    `INSERT INTO ${t.queue} (id, job_name, payload, run_at, created_at)
     SELECT gen_random_uuid(), CASE WHEN g <= 10 THEN 'rare' WHEN g <= 10010 THEN 'mid' ELSE 'big' END,
            jsonb_build_object('i', g), now() - interval '1 hour' + g * interval '40 ms', now() - (${ROWS} - g) * interval '1 ms'
     FROM generate_series(1, ${ROWS}) g`,
  );
  await h.db.query(
    `UPDATE ${t.queue} SET status = 'running', attempt = 1, lease_owner = gen_random_uuid(), lease_expires_at = now() + interval '1 minute'
     WHERE id IN ((SELECT id FROM ${t.queue} WHERE job_name = 'rare' LIMIT 5) UNION ALL (SELECT id FROM ${t.queue} WHERE job_name = 'big' LIMIT 35))`,
  );
  await h.db.query(
    `INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
     SELECT gen_random_uuid(), CASE WHEN g <= 10 THEN 'rare' WHEN g <= 10010 THEN 'mid' ELSE 'big' END, '{}', 1, 1,
            CASE WHEN g <= 10 THEN 'invalid_payload' WHEN g % 2 = 0 THEN 'exhausted' ELSE 'permanent' END,
            now() - interval '2 days', now() - g * interval '1 ms'
     FROM generate_series(1, ${ROWS}) g`,
  );
  await h.db.query(`ANALYZE ${t.queue}`);
  await h.db.query(`ANALYZE ${t.deadLetters}`);
  ids.queued = (await h.rows<{ id: string }>(`SELECT id FROM ${t.queue} WHERE job_name = 'rare' AND status = 'queued' LIMIT 1`))[0]!.id;
  ids.dead = (await h.rows<{ id: string }>(`SELECT id FROM ${t.deadLetters} WHERE job_name = 'rare' LIMIT 1`))[0]!.id;
}, 120_000);

const page2 = <Q extends { cursor?: string; limit?: number }, R extends { nextCursor: string | null }>(list: (db: Db, q: Q) => Promise<R>, q: Q) =>
  async (db: Db) => {
    const first = await list(h.db, { ...q, limit: 3 });
    if (!first.nextCursor) throw new Error(`no second page for ${JSON.stringify(q)}`);
    return list(db, { ...q, limit: 3, cursor: first.nextCursor });
  };
const jobsIn = (db: Db, q: ListJobsQuery) => listJobs(db, t, q);
const deadIn = (db: Db, q: ListDeadLettersQuery) => listDeadLetters(db, t, q);
type Read = [string, (db: Db) => Promise<unknown>];

/** Every read the API and the dashboard make of the queue and the dead letters, in the shapes they take (page 2: after a cursor). */
const READS: readonly Read[] = [
  ["stats", (db) => getStats(db, t)],
  ...([{}, { status: "queued" }, { status: "running" }, { job: "big" }, { job: "rare" }, { job: "rare", status: "queued" }, { job: "rare", status: "running" }, { job: "big", status: "running" }] as ListJobsQuery[])
    .flatMap((q): Read[] => [[`jobs ${JSON.stringify(q)}`, (db) => jobsIn(db, q)], [`jobs ${JSON.stringify(q)}, page 2`, page2(jobsIn, q)]]),
  ["jobs {job: nothing}", (db) => jobsIn(db, { job: "nothing" })],
  ...([{}, { job: "rare" }, { job: "big" }, { reason: "invalid_payload" }, { job: "big", reason: "exhausted" }, { job: "rare", reason: "invalid_payload" }] as ListDeadLettersQuery[])
    .flatMap((q): Read[] => [[`dead letters ${JSON.stringify(q)}`, (db) => deadIn(db, q)], [`dead letters ${JSON.stringify(q)}, page 2`, page2(deadIn, q)]]),
  ["dead letters {job: big, reason: invalid_payload}", (db) => deadIn(db, { job: "big", reason: "invalid_payload" })],
  ["job by id", (db) => getJob(db, t, ids.queued)],
  ["dead job by id", (db) => getJob(db, t, ids.dead)],
  ["dead letter by id", (db) => getDeadLetter(db, t, ids.dead)],
];

describe("reads at 200,000 queued jobs and 200,000 dead letters", () => {
  it("count each job up to the limit, say which counts are lower bounds, and find the oldest wait", async () => {
    const stats = await getStats(h.db, t);
    expect(stats.countLimit).toBe(10_000);
    expect(stats.queue).toEqual([
      { job: "big", status: "queued", count: 10_000, countIsLowerBound: true, oldestWaitingMs: expect.any(Number) },
      { job: "big", status: "running", count: 35, oldestWaitingMs: null },
      { job: "mid", status: "queued", count: 10_000, oldestWaitingMs: expect.any(Number) },
      { job: "rare", status: "queued", count: 5, oldestWaitingMs: expect.any(Number) },
      { job: "rare", status: "running", count: 5, oldestWaitingMs: null },
    ]);
    // The queue's first due job is rare's (run_at one hour ago, 40 ms apart).
    const rareWait = stats.queue.find((d) => d.job === "rare" && d.status === "queued")!.oldestWaitingMs!;
    expect(rareWait).toBeGreaterThan(3_500_000);
    expect(stats.oldestWaitingMs).toBe(Math.max(...stats.queue.map((d) => d.oldestWaitingMs ?? 0)));
    expect(stats.deadLetters).toEqual([
      { job: "big", count: 10_000, countIsLowerBound: true, lastDeadAt: expect.any(String) },
      { job: "mid", count: 10_000, lastDeadAt: expect.any(String) },
      { job: "rare", count: 10, lastDeadAt: expect.any(String) },
    ]);
  });

  it("list pages in their order, a rare job's jobs and dead letters included", async () => {
    const jobs = (q: ListJobsQuery) => listJobs(h.db, t, q);
    const dead = (q: ListDeadLettersQuery) => listDeadLetters(h.db, t, q);
    const first = await jobs({});
    expect(first.items).toHaveLength(50);
    const second = await jobs({ cursor: first.nextCursor! });
    const page = [...first.items, ...second.items].map((j) => j.id);
    expect(page).toEqual([...page].sort().reverse());
    const queued = (await jobs({ status: "queued" })).items;
    expect(queued).toHaveLength(50);
    expect(queued.every((j) => j.status === "queued")).toBe(true);
    expect((await jobs({ status: "running" })).items).toHaveLength(40);
    const rare = await jobs({ job: "rare" });
    expect(rare.items.map((j) => j.status).sort()).toEqual([...Array(5).fill("queued"), ...Array(5).fill("running")]);
    expect(rare.items.map((j) => j.id)).toEqual(rare.items.map((j) => j.id).sort().reverse());
    expect((await jobs({ job: "rare", status: "queued", limit: 2 })).items).toHaveLength(2);
    expect((await jobs({ job: "rare", status: "running" })).items).toHaveLength(5);
    const big = await jobs({ job: "big" });
    const big2 = await jobs({ job: "big", cursor: big.nextCursor! });
    expect(big.items.length + big2.items.length).toBeGreaterThan(50);
    expect([...big.items, ...big2.items].every((j) => j.job === "big")).toBe(true);
    expect(await jobs({ job: "nothing" })).toEqual({ items: [], nextCursor: null });

    const dl = await dead({});
    const dl2 = await dead({ cursor: dl.nextCursor! });
    const times = [...dl.items, ...dl2.items].map((d) => d.deadAt);
    expect(times).toEqual([...times].sort().reverse());
    expect((await dead({ reason: "invalid_payload" })).items).toHaveLength(10);
    expect((await dead({ job: "rare" })).items).toHaveLength(10);
    expect((await dead({ job: "big", reason: "invalid_payload" })).items).toEqual([]);
    const exhausted = await dead({ job: "big", reason: "exhausted" });
    expect(exhausted.items.length).toBeGreaterThan(0);
    expect(exhausted.items.every((d) => d.reason === "exhausted" && d.job === "big")).toBe(true);
    expect(await getJob(h.db, t, ids.queued)).toMatchObject({ id: ids.queued, status: "queued" });
    expect(await getJob(h.db, t, ids.dead)).toMatchObject({ id: ids.dead, status: "dead" });
  });

  it("read along indexes, never a whole table, and at most a bounded number of rows per statement", async () => {
    const over: string[] = [];
    for (const [read, run] of READS) {
      const sent: Array<{ text: string; params: readonly unknown[] }> = [];
      await run({ query: (text, params = [], options) => (sent.push({ text, params }), h.db.query(text, params, options)) });
      // Each read is one statement.
      expect(sent, read).toHaveLength(1);
      const { text, params } = sent[0]!;
      const [row] = (await h.db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode; JIT?: unknown }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
        params,
      )).rows;
      const explained = row!["QUERY PLAN"][0]!;
      const { read: rows, seqScans } = readsOf(explained.Plan);
      for (const table of seqScans) over.push(`${read}: sequential scan of ${table}`);
      for (const [table, n] of rows) if (n > BUDGET) over.push(`${read}: read ${n} rows of ${table}`);
      // A plan that looks expensive is JIT-compiled, which alone costs more than these reads take.
      if (explained.JIT) over.push(`${read}: JIT-compiled`);
    }
    expect(over).toEqual([]);
  });
});

describe("stats over many busy jobs", () => {
  it("share what one read counts: 25 jobs of 5,000 queued jobs and dead letters each are counted to 1,200, as lower bounds; 300 jobs to 100", async () => {
    const own = h.make([], { tablePrefix: "many_" });
    await own.migrate();
    const m = own.tables;
    await h.db.query(
      `INSERT INTO ${m.queue} (id, job_name, payload, run_at) SELECT gen_random_uuid(), 'job-' || (g % 25), '{}', now() - interval '1 minute'
       FROM generate_series(1, 125000) g`,
    );
    await h.db.query(
      `INSERT INTO ${m.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
       SELECT gen_random_uuid(), 'job-' || (g % 25), '{}', 1, 1, 'exhausted', now() - interval '2 days', now() - g * interval '1 ms'
       FROM generate_series(1, 125000) g`,
    );
    await h.db.query(`ANALYZE ${m.queue}`);
    await h.db.query(`ANALYZE ${m.deadLetters}`);
    const stats = await getStats(h.db, m);
    expect(stats.queue).toHaveLength(25);
    for (const d of stats.queue) expect(d).toMatchObject({ status: "queued", count: 1_200, countIsLowerBound: true });
    expect(stats.deadLetters).toHaveLength(25);
    for (const d of stats.deadLetters) expect(d).toMatchObject({ count: 1_200, countIsLowerBound: true });
    // 275 more jobs of 150 each: 300 share the read, 100 each (each was counted to at least 1,000, 300,000 entries in all).
    await h.db.query(
      `INSERT INTO ${m.queue} (id, job_name, payload, run_at) SELECT gen_random_uuid(), 'more-' || (g % 275), '{}', now() - interval '1 minute'
       FROM generate_series(1, 275 * 150) g`,
    );
    await h.db.query(`ANALYZE ${m.queue}`);
    const more = await getStats(h.db, m);
    expect(more.queue).toHaveLength(300);
    for (const d of more.queue) expect(d).toMatchObject({ status: "queued", count: 100, countIsLowerBound: true });
  }, 60_000);

  // Every job's share was the budget over the jobs: one busy job beside 299 with a job each was "100+".
  it("let the jobs that reach their share count on into what the others left", async () => {
    const own = h.make([], { tablePrefix: "share_" });
    await own.migrate();
    const m = own.tables;
    await h.db.query(
      `INSERT INTO ${m.queue} (id, job_name, payload, run_at)
       SELECT gen_random_uuid(), CASE WHEN g <= 5000 THEN 'busy' ELSE 'one-' || g END, '{}', now() - interval '1 minute'
       FROM generate_series(1, 5299) g`,
    );
    await h.db.query(
      `INSERT INTO ${m.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
       SELECT gen_random_uuid(), CASE WHEN g <= 12000 THEN 'busy' ELSE 'one-' || g END, '{}', 1, 1, 'exhausted', now(), now() - g * interval '1 ms'
       FROM generate_series(1, 12299) g`,
    );
    await h.db.query(`ANALYZE ${m.queue}`);
    await h.db.query(`ANALYZE ${m.deadLetters}`);
    const stats = await getStats(h.db, m);
    expect(stats.queue).toHaveLength(300);
    expect(stats.queue.find((d) => d.job === "busy")).toEqual({ job: "busy", status: "queued", count: 5_000, oldestWaitingMs: expect.any(Number) });
    expect(stats.deadLetters.find((d) => d.job === "busy")).toEqual({ job: "busy", count: 10_000, countIsLowerBound: true, lastDeadAt: expect.any(String) });
    expect(stats.queue.filter((d) => d.count === 1)).toHaveLength(299);
  }, 60_000);
});

// One job's queued jobs and dead letters all older than 60,000 of another, with time-ordered ids as the
// queue makes them: the planner, taking a job's rows for spread evenly over the ids, walked the primary key
// past every newer job to find a page of the old one's.
describe("lists of a job whose rows are all older than the rest", () => {
  it("read along the job's index, about a page of rows", async () => {
    const own = h.make([], { tablePrefix: "skew_" });
    await own.migrate();
    const m = own.tables;
    // Ids in the order of g, as UUIDv7 ids are in the order they were made.
    const id = "('00000000-0000-7000-8000-' || lpad(to_hex(g), 12, '0'))::uuid";
    const name = "CASE WHEN g <= 15000 THEN CASE WHEN g % 3 = 0 THEN 'old' ELSE 'email' END ELSE 'bulk' END";
    await h.db.query(`INSERT INTO ${m.queue} (id, job_name, payload, run_at) SELECT ${id}, ${name}, '{}', now() + interval '1 day' FROM generate_series(1, 75000) g`);
    await h.db.query(
      `INSERT INTO ${m.deadLetters} (id, job_name, payload, attempts, max_attempts, reason, created_at, dead_at)
       SELECT ${id}, ${name}, '{}', 1, 1, 'exhausted', now() - interval '3 days', now() - interval '3 days' + g * interval '1 second' FROM generate_series(1, 75000) g`,
    );
    await h.db.query(`ANALYZE ${m.queue}`);
    await h.db.query(`ANALYZE ${m.deadLetters}`);
    const want = async (table: string, order: string) =>
      (await h.rows<{ id: string }>(`SELECT id::text AS id FROM ${table} WHERE job_name = 'old' ORDER BY ${order} LIMIT 100`)).map((r) => r.id);
    const reads: Array<[string, (db: Db, cursor?: string) => Promise<{ items: Array<{ id: string }>; nextCursor: string | null }>, string[]]> = [
      ["jobs", (db, cursor) => listJobs(db, m, { job: "old", limit: 50, cursor }), await want(m.queue, "id DESC")],
      ["queued jobs", (db, cursor) => listJobs(db, m, { job: "old", status: "queued", limit: 50, cursor }), await want(m.queue, "id DESC")],
      ["dead letters", (db, cursor) => listDeadLetters(db, m, { job: "old", limit: 50, cursor }), await want(m.deadLetters, "dead_at DESC, id DESC")],
    ];
    const over: string[] = [];
    for (const [read, list, expected] of reads) {
      const first = await list(h.db);
      const second = await list(h.db, first.nextCursor!);
      expect([...first.items, ...second.items].map((j) => j.id), read).toEqual(expected);
      for (const cursor of [undefined, first.nextCursor!]) {
        const sent: Array<{ text: string; params: readonly unknown[] }> = [];
        await list({ query: (text, params = [], options) => (sent.push({ text, params }), h.db.query(text, params, options)) }, cursor);
        const [row] = (await h.db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sent[0]!.text}`, sent[0]!.params)).rows;
        const walk = (node: PlanNode): number =>
          (node["Relation Name"] ? (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0)) * node["Actual Loops"] : 0) + (node.Plans ?? []).reduce((n, c) => n + walk(c), 0);
        const n = walk(row!["QUERY PLAN"][0]!.Plan);
        if (n > 1_000) over.push(`${read}${cursor ? ", page 2" : ""}: read ${n} rows`);
      }
    }
    expect(over).toEqual([]);
  }, 60_000);
});
