// A statement that fails mid-tick changed nothing (it is atomic): the tick keeps its runs going and sends
// again after a pause, instead of requeueing runs whose handlers go on (another tick then ran them beside
// the first, or at their last attempt they became dead letters while they ran).
import pg from "pg";
import { expect, it } from "vitest";
import { z } from "zod";
import { type Db, defineJob, type Handoff } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick_statement_failed");

it("a settle that hits the server's statement timeout on a locked row is sent again; the other runs go on and succeed once", async () => {
  const live = new Map<number, number>();
  let overlaps = 0;
  const long = defineJob({
    name: "long",
    maxAttempts: 1,
    schema: z.object({ i: z.number() }),
    // Does not watch its signal, as many handlers do not.
    handler: async ({ i }) => {
      const now = (live.get(i) ?? 0) + 1;
      live.set(i, now);
      if (now > 1) overlaps++;
      await sleep(2_500);
      live.set(i, live.get(i)! - 1);
    },
  });
  const short = defineJob({ name: "short", maxAttempts: 1, schema: z.object({}), handler: () => sleep(200) });
  const setup = await h.isolated([long, short]);
  // The tick's own pool: every statement it sends is given up by the server after 300 ms.
  const pool = new pg.Pool({ connectionString: h.url, max: 4, statement_timeout: 300 });
  pool.on("error", () => {});
  const jobs = h.make([long, short], { tablePrefix: setup.settings.tablePrefix }, pool);
  await jobs.enqueueMany([0, 1, 2, 3].map((i) => ({ job: "long" as const, payload: { i }, priority: 1 })));
  const { id: shortId } = await jobs.enqueue("short", {});

  const tick = jobs.tick({ budgetMs: 10_000, concurrency: 5 }).then((report) => ({ report }), (error: unknown) => ({ error }));
  await expect.poll(async () => (await h.rows(`SELECT status FROM ${jobs.tables.queue} WHERE id = $1`, [shortId]))[0]?.status, { interval: 10 }).toBe("running");
  // Another transaction holds the short job's row for 1.2 s: the settle of its run waits on it, past the timeout.
  const holder = await h.main.connect();
  await holder.query("BEGIN");
  await holder.query(`SELECT 1 FROM ${jobs.tables.queue} WHERE id = $1 FOR UPDATE`, [shortId]);
  await sleep(1_200);
  await holder.query("COMMIT");
  holder.release();
  const outcome = await tick;
  await pool.end();

  expect(jobs.logs.filter((e) => e.msg === "tick statement failed").length).toBeGreaterThan(0);
  expect(jobs.logs.find((e) => e.msg === "tick statement failed")).toMatchObject({ level: "error", error: expect.stringContaining("statement timeout") });
  expect(outcome).toMatchObject({ report: { claimed: 5, succeeded: 5, requeued: 0, deadLettered: 0 } });
  expect(overlaps).toBe(0);
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.deadLetters}`)).toEqual([{ n: 0 }]);
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
  expect(await h.rows(`SELECT job_name, outcome, attempt FROM ${jobs.tables.runs} ORDER BY job_name, job_id`)).toEqual([
    ...[0, 1, 2, 3].map(() => ({ job_name: "long", outcome: "succeeded", attempt: 1 })),
    { job_name: "short", outcome: "succeeded", attempt: 1 },
  ]);
}, 30_000);

it("a statement whose answer is lost after it committed is not counted twice: what it carried is not sent again", async () => {
  const noop = defineJob({ name: "noop", schema: z.object({ n: z.number() }), handler: () => {} });
  const setup = await h.isolated([noop]);
  let lose = true;
  // The final statement reaches the server and commits; its answer is lost on the way back.
  const lossy: Db = {
    query: async <R,>(text: string, params?: readonly unknown[]) => {
      const answer = await h.db.query<R>(text, params);
      if (lose && /finished_at = now\(\), reserved = /.test(text)) {
        lose = false;
        throw new Error("Connection terminated unexpectedly");
      }
      return answer;
    },
  };
  const jobs = h.make([noop], { tablePrefix: setup.settings.tablePrefix }, lossy);
  await jobs.enqueueMany(Array.from({ length: 300 }, (_, n) => ({ job: "noop" as const, payload: { n } })));
  const report = await jobs.tick({ budgetMs: 10_000, concurrency: 32 });
  expect(lose).toBe(false);
  const [metrics] = await h.rows<{ n: number }>(`SELECT coalesce(sum(succeeded), 0)::int AS n FROM ${jobs.tables.metrics}`);
  const [history] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.runs} WHERE outcome = 'succeeded'`);
  const [slot] = await h.rows<{ n: number }>(`SELECT coalesce(sum(succeeded), 0)::int AS n FROM ${jobs.tables.ticks}`);
  expect({ metrics: metrics!.n, history: history!.n, slot: slot!.n }).toEqual({ metrics: 300, history: 300, slot: 300 });
  expect(report.succeeded).toBeLessThanOrEqual(300);
});

/** A Db over the test's own whose `nth` statement matching `pattern` commits, then loses its answer on the way back. */
const losing = (pattern: RegExp, nth: number) => {
  let seen = 0;
  const db: Db = {
    query: async <R,>(text: string, params?: readonly unknown[]) => {
      const answer = await h.db.query<R>(text, params);
      if (pattern.test(text) && ++seen === nth) throw new Error("Connection terminated unexpectedly");
      return answer;
    },
  };
  return { db, lost: () => seen >= nth };
};

it("the jobs of a claim whose answer is lost go back unstarted: each runs once, its one attempt not spent on a run that never was", async () => {
  const ran = new Map<number, number>();
  const once = defineJob({ name: "once", maxAttempts: 1, schema: z.object({ n: z.number() }), handler: ({ n }) => void ran.set(n, (ran.get(n) ?? 0) + 1) });
  const setup = await h.isolated([once]);
  // The third claim commits; the tick never learns which jobs it took.
  const { db, lost } = losing(/claimed AS \(/, 3);
  const jobs = h.make([once], { tablePrefix: setup.settings.tablePrefix }, db);
  await jobs.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ job: "once" as const, payload: { n } })));
  const report = await jobs.tick({ budgetMs: 10_000, concurrency: 5 });
  expect(lost()).toBe(true);
  expect(report).toMatchObject({ succeeded: 60, deadLettered: 0 });
  expect([...ran.values()].filter((c) => c !== 1)).toEqual([]);
  expect(ran.size).toBe(60);
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.deadLetters}`)).toEqual([{ n: 0 }]);
  expect(await h.rows(`SELECT DISTINCT outcome, attempt FROM ${jobs.tables.runs}`)).toEqual([{ outcome: "succeeded", attempt: 1 }]);
  const warned = jobs.logs.find((e) => e.msg === "a claim's answer was lost: its jobs went back unstarted");
  expect(warned).toMatchObject({ level: "warn", jobIds: expect.any(Array) });
  expect((warned as { jobIds?: unknown[] }).jobIds).toHaveLength(5);
});

it("a tick whose first statement loses its answer gives back its slot and its claim: the next tick runs the job at once", async () => {
  const once = defineJob({ name: "once", maxAttempts: 1, schema: z.object({}), handler: () => {} });
  const setup = await h.isolated([once]);
  const { db, lost } = losing(/ticked AS \(/, 1);
  const settings = { tablePrefix: setup.settings.tablePrefix, maxTicks: 1 };
  const first = h.make([once], settings, db);
  await first.enqueue("once", {});
  const outcome = await first.tick({ budgetMs: 5_000 }).then((report) => ({ report }), (error: unknown) => ({ error }));
  expect(lost()).toBe(true);
  expect(outcome).toMatchObject({ report: { claimed: 0 } });
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${first.tables.ticks} WHERE expires_at > now()`)).toEqual([{ n: 0 }]);
  const next = await h.make([once], settings).tick({ budgetMs: 5_000 });
  expect(next).toMatchObject({ claimed: 1, succeeded: 1, capped: false });
  expect(await h.rows(`SELECT outcome, attempt FROM ${first.tables.runs}`)).toEqual([{ outcome: "succeeded", attempt: 1 }]);
});

it("a lost claim the server commits only after the next statements went out is given back once found, and counted once", async () => {
  const ran = new Map<number, number>();
  // Runs of 100 ms keep the tick going well past the late commit (12 rounds of 5).
  const once = defineJob({ name: "once", maxAttempts: 1, schema: z.object({ n: z.number() }), handler: ({ n }) => (ran.set(n, (ran.get(n) ?? 0) + 1), sleep(100)) });
  const setup = await h.isolated([once]);
  let seen = 0;
  let late: Promise<unknown> | undefined;
  // The third claim waits at the server (on a lock, say) while its connection is cut; it commits 600 ms later.
  const db: Db = {
    query: async <R,>(text: string, params?: readonly unknown[]) => {
      if (/claimed AS \(/.test(text) && ++seen === 3) {
        late = sleep(600).then(() => h.db.query(text, params));
        throw new Error("Connection terminated unexpectedly");
      }
      return h.db.query<R>(text, params);
    },
  };
  const jobs = h.make([once], { tablePrefix: setup.settings.tablePrefix }, db);
  await jobs.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ job: "once" as const, payload: { n } })));
  const report = await jobs.tick({ budgetMs: 10_000, concurrency: 5 });
  await late;
  // Nothing is left running under the lost token; whatever was given back at the very end runs in the next tick.
  expect(await h.rows(`SELECT status FROM ${jobs.tables.queue} WHERE status = 'running'`)).toEqual([]);
  const next = await h.make([once], { tablePrefix: setup.settings.tablePrefix }).tick({ budgetMs: 10_000, concurrency: 5 });
  expect(await h.rows(`SELECT status FROM ${jobs.tables.queue}`)).toEqual([]);
  expect({ ran: ran.size, twice: [...ran.values()].filter((c) => c !== 1).length }).toEqual({ ran: 60, twice: 0 });
  expect({ claimed: report.claimed + next.claimed, succeeded: report.succeeded + next.succeeded }).toEqual({ claimed: 60, succeeded: 60 });
  expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.deadLetters}`)).toEqual([{ n: 0 }]);
  expect(jobs.logs.find((e) => e.msg === "a claim's answer was lost: its jobs went back unstarted")).toBeDefined();
});

it("a lost statement that wrote the tick's slot row counts its given-back jobs once, and a lost fan-out frees the slots it reserved", async () => {
  // Runs of 100 ms, 20 rounds: the tick claims for about 2 s, and a claim also writes the slot row about once a second.
  const once = defineJob({ name: "once", maxAttempts: 1, schema: z.object({ n: z.number() }), handler: () => sleep(100) });
  const setup = await h.isolated([once]);
  // A claim in a hold that writes the slot row (`greatest(t.expires_at`), then the first statement, which reserves fan-out slots.
  const { db: holding, lost: heldLost } = losing(/claimed AS \([\s\S]*greatest\(t\.expires_at/, 1);
  const jobs = h.make([once], { tablePrefix: setup.settings.tablePrefix }, holding);
  await jobs.enqueueMany(Array.from({ length: 100 }, (_, n) => ({ job: "once" as const, payload: { n } })));
  const report = await jobs.tick({ budgetMs: 10_000, concurrency: 5 });
  expect(heldLost()).toBe(true);
  expect(report).toMatchObject({ claimed: 100, succeeded: 100 });
  expect(await h.rows(`SELECT coalesce(sum(claimed), 0)::int AS n FROM ${jobs.tables.ticks}`)).toEqual([{ n: 100 }]);

  const { db: fanning, lost } = losing(/fan_reserved AS \(/, 1);
  const settings = { tablePrefix: setup.settings.tablePrefix, maxTicks: 3 };
  const fanned = h.make([once], settings, fanning);
  await fanned.enqueueMany(Array.from({ length: 40 }, (_, n) => ({ job: "once" as const, payload: { n } })));
  const spawned: unknown[] = [];
  await fanned.tick({ budgetMs: 5_000, concurrency: 2, spawn: (handoffs) => void spawned.push(...handoffs) });
  expect(lost()).toBe(true);
  // Only the reservations the tick learned of were started; none it never learned of is left held.
  const held = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${fanned.tables.ticks} WHERE reserved AND expires_at > now()`);
  expect(held[0]!.n).toBeLessThanOrEqual(spawned.length);
});

it("a lost claim sent in the last part of a split settle, which wrote the slot row, is counted once", async () => {
  // 100 runs end together with 60 KB outputs each: their settle goes out in two parts (over 4 MB), and the claim
  // rides the last part, which writes the slot row though the step as planned did not.
  let open!: () => void;
  const gate = new Promise<void>((go) => (open = go));
  let first = 0;
  const big = defineJob({ name: "big", maxAttempts: 1, schema: z.object({ n: z.number() }), handler: async () => (first++ < 100 ? await gate : undefined, "x".repeat(60_000)) });
  const setup = await h.isolated([big]);
  // One statement at a time (as on a single connection): a claim then rides the settle's last part.
  const { db: lossy, lost } = losing(/claimed AS \([\s\S]*greatest\(t\.expires_at/, 1);
  const jobs = h.make([big], { tablePrefix: setup.settings.tablePrefix }, { ...lossy, statementsAtOnce: 1 });
  await jobs.enqueueMany(Array.from({ length: 200 }, (_, n) => ({ job: "big" as const, payload: { n } })));
  const ticking = jobs.tick({ budgetMs: 20_000, concurrency: 100 });
  await expect.poll(() => first, { interval: 10 }).toBe(100);
  open();
  const report = await ticking;
  expect(lost()).toBe(true);
  expect(report).toMatchObject({ claimed: 200, succeeded: 200 });
  expect(await h.rows(`SELECT coalesce(sum(claimed), 0)::int AS n FROM ${jobs.tables.ticks}`)).toEqual([{ n: 200 }]);
});

it("a final statement that hands the slot on and loses its answer is sent again, and hands on the reservation it made", async () => {
  const slow = defineJob({ name: "slow", schema: z.object({ n: z.number() }), handler: () => sleep(100) });
  const setup = await h.isolated([slow]);
  // The final statement reserves the slot for a successor and commits; its answer is lost on the way back.
  const { db, lost } = losing(/finished_at = now\(\), reserved = /, 1);
  // One slot: no fan-out, the handoff alone passes it on.
  const settings = { tablePrefix: setup.settings.tablePrefix, maxTicks: 1 };
  const jobs = h.make([slow], settings, db);
  await jobs.enqueueMany(Array.from({ length: 60 }, (_, n) => ({ job: "slow" as const, payload: { n } })));
  const handoffs: Handoff[] = [];
  const first = await jobs.tick({ budgetMs: 1_500, concurrency: 2, spawn: (hs) => void handoffs.push(...hs) });
  expect(lost()).toBe(true);
  // Before, the retry found the slot no longer the tick's and handed nothing on: the reservation, under a token
  // no tick was given, held the slot until it expired.
  expect(handoffs).toEqual([{ slot: first.slot, token: expect.any(String) }]);
  expect(await h.rows(`SELECT reserved, owner::text AS owner FROM ${jobs.tables.ticks} WHERE slot = $1`, [first.slot])).toEqual([{ reserved: true, owner: handoffs[0]!.token }]);
  const next = await h.make([slow], settings).tick({ budgetMs: 1_500, concurrency: 2, handoff: handoffs[0]! });
  expect(next.slot).toBe(first.slot);
  expect(next.claimed).toBeGreaterThan(0);
}, 20_000);

it("a first statement whose connection is cut (57P01, a restarting server) is sent again: the tick runs its jobs (it returned at once, having run none, as if all was well)", async () => {
  const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
  const jobs = await h.isolated([quick]);
  await jobs.enqueueMany(Array.from({ length: 5 }, () => ({ job: "quick" as const, payload: {} })));
  const holder = await h.main.connect();
  try {
    await holder.query(`BEGIN; LOCK TABLE ${jobs.tables.ticks} IN ACCESS EXCLUSIVE MODE`);
    const ticking = jobs.tick({ budgetMs: 5_000 }).then((r) => r, (e: unknown) => e);
    const waiting = async () => (await h.rows<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%${jobs.tables.ticks}%' AND pid <> pg_backend_pid()`,
    ))[0]?.pid;
    for (let i = 0; i < 200 && (await waiting()) === undefined; i++) await sleep(20);
    const pid = await waiting();
    expect(pid).toBeDefined();
    await h.rows(`SELECT pg_terminate_backend($1)`, [pid]);
    await holder.query("COMMIT");
    expect(await ticking).toMatchObject({ succeeded: 5 });
  } finally {
    await holder.query("ROLLBACK").catch(() => {});
    holder.release();
  }
});
