// The fleet-wide tick cap (JOBS_MAX_TICKS) is enforced in PostgreSQL: racing processes never hold
// more slots than the cap, a killed tick's slot frees when its lease expires, and a tick that finds
// every slot taken costs one statement.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("fleet");
const child = fileURLToPath(new URL("./support/fleet-child.ts", import.meta.url));

const held = async (prefix: string) =>
  (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${prefix}ticks WHERE expires_at > now() AND NOT reserved`))[0]!.n;

describe("the fleet-wide tick cap", () => {
  it("five processes starting ticks in a loop never hold more than JOBS_MAX_TICKS=3 slots or run more than 3 x concurrency handlers", async () => {
    const work = defineJob({ name: "fleet-work", schema: z.object({ n: z.number() }), handler: () => {} });
    const jobs = await h.isolated([work]);
    const prefix = jobs.settings.tablePrefix;
    await h.db.query(`CREATE TABLE fleet_stats (running int NOT NULL, peak int NOT NULL)`);
    await h.db.query(`INSERT INTO fleet_stats VALUES (0, 0)`);
    await h.db.query(`CREATE TABLE fleet_runs (id serial PRIMARY KEY, job_id uuid NOT NULL, attempt int NOT NULL,
      started timestamptz NOT NULL DEFAULT clock_timestamp(), finished timestamptz)`);
    const N = 600;
    await jobs.enqueueMany(Array.from({ length: N }, (_, n) => ({ job: "fleet-work" as const, payload: { n } })));

    let peakSlots = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peakSlots = Math.max(peakSlots, await held(prefix));
        await sleep(10);
      }
    })();
    const outputs = await Promise.all(
      Array.from({ length: 5 }, () =>
        new Promise<{ ticks: number; capped: number; requeued: number }>((resolve, reject) => {
          const p = spawn(process.execPath, ["--import", "tsx", child, h.url, prefix, "30"], { stdio: ["ignore", "pipe", "inherit"] });
          let out = "";
          p.stdout.on("data", (d: Buffer) => (out += d.toString()));
          p.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out) as { ticks: number; capped: number; requeued: number }) : reject(new Error(`child exited ${code}`))));
        }),
      ),
    );
    sampling = false;
    await sampler;

    expect(peakSlots).toBeGreaterThan(1);
    expect(peakSlots).toBeLessThanOrEqual(3);
    const [stats] = await h.rows<{ running: number; peak: number }>(`SELECT running, peak FROM fleet_stats`);
    expect(stats!.running).toBe(0);
    expect(stats!.peak).toBeGreaterThan(4);
    expect(stats!.peak).toBeLessThanOrEqual(3 * 4);
    // Every job ran, once: again only when a tick's deadline cut a run short and requeued it (at least once,
    // as documented; on a loaded machine a run claimed just before a cutoff can pass its deadline).
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${prefix}queue`)).toEqual([{ n: 0 }]);
    const [ran] = await h.rows<{ runs: number; jobs: number; again: number }>(
      `SELECT count(*)::int AS runs, count(DISTINCT job_id)::int AS jobs, count(*) FILTER (WHERE attempt > 1)::int AS again FROM fleet_runs`);
    const requeued = outputs.reduce((sum, o) => sum + o.requeued, 0);
    expect(ran!.jobs).toBe(N);
    expect(ran!.runs - N).toBe(ran!.again);
    expect(ran!.again).toBeLessThanOrEqual(requeued);
    // Some starts found every slot taken and returned at once.
    expect(outputs.reduce((sum, o) => sum + o.capped, 0)).toBeGreaterThan(0);
  }, 60_000);

  it("a tick that finds every slot taken costs one statement; a killed tick's slot is free again once its lease expires", async () => {
    const hang = defineJob({ name: "hang", schema: z.object({}), handler: () => {} });
    const jobs = await h.isolated([hang], { maxTicks: 1 });
    const prefix = jobs.settings.tablePrefix;
    await jobs.enqueue("hang", {});
    // A tick of a process that was killed: it holds slot 1, running "hang", under a short lease.
    const owner = crypto.randomUUID();
    await h.db.query(`UPDATE ${prefix}ticks SET owner = $1, expires_at = now() + interval '1.5 seconds', started_at = now() WHERE slot = 1`, [owner]);
    await h.db.query(`UPDATE ${prefix}queue SET status = 'running', attempt = 1, lease_owner = gen_random_uuid(), lease_expires_at = now() + interval '1.5 seconds'`);

    const capped = await jobs.tick({ budgetMs: 2_000 });
    expect(capped).toMatchObject({ capped: true, slot: null, claimed: 0, statements: 1 });
    await sleep(1_700);
    const after = await jobs.tick({ budgetMs: 2_000 });
    expect(after).toMatchObject({ capped: false, slot: 1, reclaimed: 1, claimed: 1, succeeded: 1 });
    expect(await held(prefix)).toBe(0);
  });

  it("a tick started for a reserved slot that finds nothing to do frees the reservation in its one statement", async () => {
    const jobs = await h.isolated([], { maxTicks: 3 });
    const prefix = jobs.settings.tablePrefix;
    // Slot 2 reserved for this tick by one that fanned out or handed on; by the time it starts, the queue is empty.
    const token = crypto.randomUUID();
    await h.db.query(`UPDATE ${prefix}ticks SET owner = $1, reserved = true, expires_at = now() + interval '30 seconds' WHERE slot = 2`, [token]);
    const report = await jobs.tick({ budgetMs: 2_000, handoff: { slot: 2, token } });
    expect(report).toMatchObject({ statements: 1, slot: null, capped: false, claimed: 0 });
    // Left reserved, the slot would count against JOBS_MAX_TICKS until the reservation expired.
    expect(await h.rows(`SELECT slot, owner, reserved FROM ${prefix}ticks WHERE expires_at > now()`)).toEqual([]);
    // A token that does not match leaves another tick's reservation alone.
    await h.db.query(`UPDATE ${prefix}ticks SET owner = $1, reserved = true, expires_at = now() + interval '30 seconds' WHERE slot = 2`, [token]);
    await jobs.tick({ budgetMs: 2_000, handoff: { slot: 2, token: crypto.randomUUID() } });
    expect(await h.rows(`SELECT slot, owner::text, reserved FROM ${prefix}ticks WHERE expires_at > now()`)).toEqual([{ slot: 2, owner: token, reserved: true }]);
  });

  it("an idle tick takes no slot and sends one statement", async () => {
    const jobs = await h.isolated([]);
    const report = await jobs.tick({ budgetMs: 2_000 });
    expect(report).toMatchObject({ statements: 1, slot: null, capped: false, claimed: 0 });
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.ticks} WHERE started_at IS NOT NULL`)).toEqual([{ n: 0 }]);
  });
});

describe("a running tick picks up new work", () => {
  it("a job enqueued while a long one runs starts at once when the tick is woken, or within the claim interval when not", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const starts = new Map<string, number>();
    const long = defineJob({ name: "long", schema: z.object({}), handler: () => gate });
    const quick = defineJob({ name: "quick", schema: z.object({ tag: z.string() }), handler: ({ tag }) => void starts.set(tag, Date.now()) });
    const jobs = await h.isolated([long, quick], { claimIntervalMs: 1_500 });
    await jobs.enqueue("long", {});
    const ticking = jobs.tick({ budgetMs: 20_000 });
    await sleep(200);
    // Enqueued elsewhere (another process: a row and no wake here): the running tick claims it at its next interval.
    const elsewhere = Date.now();
    await h.rows(`INSERT INTO ${jobs.settings.tablePrefix}queue (id, job_name, payload) VALUES (gen_random_uuid(), 'quick', '{"tag":"elsewhere"}')`);
    await expect.poll(() => starts.has("elsewhere"), { timeout: 5_000, interval: 20 }).toBe(true);
    // In the same process, woken by the kick: at once.
    const woken = Date.now();
    await jobs.enqueue("quick", { tag: "woken" });
    expect(jobs.wake()).toBe(true);
    await expect.poll(() => starts.has("woken"), { timeout: 5_000, interval: 5 }).toBe(true);
    release();
    const report = await ticking;
    expect(report).toMatchObject({ claimed: 3, succeeded: 3 });
    // What they waited, for the log: the interval bounds the first, the wake the second.
    console.log(`picked up while a long job ran: enqueued elsewhere after ${starts.get("elsewhere")! - elsewhere} ms, woken after ${starts.get("woken")! - woken} ms`);
    expect(starts.get("elsewhere")! - elsewhere).toBeLessThan(1_500 + 1_000);
    expect(starts.get("woken")! - woken).toBeLessThan(750);
  });

  it("so does one enqueued elsewhere while jobs wait on a rate window an hour off (the tick waited for the window, or for its runs to end)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let quickRan = false;
    const long = defineJob({ name: "long", schema: z.object({}), handler: () => gate });
    const rated = defineJob({ name: "rated", schema: z.object({ n: z.number() }), rateLimit: { limit: 1, periodMs: 3_600_000 }, handler: () => {} });
    const quick = defineJob({ name: "quick", schema: z.object({ tag: z.string() }), handler: () => void (quickRan = true) });
    const jobs = await h.isolated([long, rated, quick], { claimIntervalMs: 200 });
    await jobs.enqueueMany([{ job: "long", payload: {} }, { job: "rated", payload: { n: 1 } }, { job: "rated", payload: { n: 2 } }]);
    const ticking = jobs.tick({ budgetMs: 20_000 });
    await expect.poll(async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running'`))[0]!.n).toBe(1);
    await h.rows(`INSERT INTO ${jobs.settings.tablePrefix}queue (id, job_name, payload) VALUES (gen_random_uuid(), 'quick', '{"tag":"elsewhere"}')`);
    // The long run is still going (its gate is shut): the quick job can only start by a claim at the interval.
    await expect.poll(() => quickRan, { timeout: 10_000, interval: 20 }).toBe(true);
    release();
    expect(await ticking).toMatchObject({ succeeded: 3 });
  });
});
