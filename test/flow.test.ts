// Flow control in the claim: per-key concurrency, rate limits (one or several, shared by a group),
// debounce, no head-of-line blocking, fairness across keys; limits from code at every claim.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob, isJobsError } from "../src/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("flow");
const tenant = z.object({ tenant: z.string(), n: z.number() });

describe("concurrency per key", () => {
  it("admits at most `limit` runs of a key at once, other keys independently, and counts runs out when they end", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = defineJob({ name: "per-tenant", schema: tenant, concurrency: { limit: 2, key: (p) => p.tenant }, handler: () => gate });
    const jobs = await h.isolated([work]);
    await jobs.enqueueMany(["a", "a", "a", "a", "b", "b", "b"].map((t, n) => ({ job: "per-tenant" as const, payload: { tenant: t, n } })));
    const first = jobs.tick({ budgetMs: 3_000, concurrency: 10 });
    await expect.poll(async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running'`))[0]!.n).toBe(4);
    const running = await h.rows<{ t: string; n: number }>(
      `SELECT payload->>'tenant' AS t, count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running' GROUP BY 1 ORDER BY 1`);
    expect(running).toEqual([{ t: "a", n: 2 }, { t: "b", n: 2 }]);
    const busy = async () => (await jobs.stats()).flowRunning.map(({ bucket, running: n }) => ({ bucket, running: n }));
    expect(await busy()).toEqual([
      { bucket: "c:per-tenant:a", running: 2 },
      { bucket: "c:per-tenant:b", running: 2 },
    ]);
    // A waiting job says what it waits on.
    const [waiting] = await h.rows<{ id: string }>(`SELECT id FROM ${jobs.tables.queue} WHERE status = 'queued' AND payload->>'tenant' = 'a' LIMIT 1`);
    expect((await jobs.get(waiting!.id))?.waitingOn).toEqual({ kind: "concurrency", key: "a", limit: 2, running: 2 });
    release();
    const report = await first;
    expect(report.succeeded).toBe(7);
    expect(await busy()).toEqual([]);
  });

  it("takes effect when the limit changes in code, and removing it frees the jobs held back", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const limited = defineJob({ name: "changing", schema: tenant, concurrency: { limit: 1 }, handler: () => gate });
    const jobs = await h.isolated([limited]);
    await jobs.enqueueMany([0, 1, 2, 3].map((n) => ({ job: "changing" as const, payload: { tenant: "x", n } })));
    const t1 = jobs.tick({ budgetMs: 2_000 });
    await expect.poll(async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running'`))[0]!.n).toBe(1);
    // The next deployment drops the limit: its tick takes the rest at once, beside the one still running.
    const free = defineJob({ name: "changing", schema: tenant, handler: () => {} });
    const next = h.make([free], { tablePrefix: jobs.settings.tablePrefix });
    expect(await next.tick({ budgetMs: 2_000 })).toMatchObject({ claimed: 3, succeeded: 3 });
    release();
    await t1;
  });
  it("claims the next job of a key held by its limit as soon as a run ends, not at the claim interval", async () => {
    const serial = defineJob({ name: "serial", schema: tenant, concurrency: { limit: 1, key: (p) => p.tenant }, handler: () => sleep(20) });
    const jobs = await h.isolated([serial]);
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "serial" as const, payload: { tenant: "t", n } })));
    // Claims stop after 2 s: at one claim per 1 s interval, 2 or 3 runs would fit.
    const report = await jobs.tick({ budgetMs: 4_000, claimCutoffMs: 2_000, concurrency: 4 });
    expect(report).toMatchObject({ claimed: 10, succeeded: 10 });
  });
});

describe("a key's jobs held back by another of their limits", () => {
  it("do not hold back that key's jobs of other users within eight rounds of its share: a per-user rate under a per-tenant concurrency limit", async () => {
    const started: string[] = [];
    const work = defineJob({
      name: "tenant-user",
      schema: z.object({ t: z.string(), u: z.string(), n: z.number() }),
      concurrency: { limit: 5, key: (p) => p.t },
      rateLimit: { limit: 1, periodMs: 3_600_000, key: (p) => p.u },
      handler: ({ u }) => void started.push(u),
    });
    const jobs = await h.isolated([work]);
    // Twenty of user u1 (one may start this hour), then one of u2, all of tenant T.
    await jobs.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: "tenant-user" as const, payload: { t: "T", u: "u1", n } })));
    const { id } = await jobs.enqueue("tenant-user", { t: "T", u: "u2", n: 20 });
    await jobs.tick({ budgetMs: 3_000, concurrency: 10 });
    // Before, a claim of 10 looked at u1's first 10 jobs, held 9, and looked no further: u2's waited for the hour.
    expect(started.sort()).toEqual(["u1", "u2"]);
    expect((await jobs.get(id))?.status).toBe("succeeded");
  });
});

describe("unkeyed and keyed jobs in one queue", () => {
  it("a tick of one slot takes keyed jobs too while unkeyed ones are due (the odd slot alternates)", async () => {
    const order: string[] = [];
    const plain = defineJob({ name: "plain-one", schema: z.object({ n: z.number() }), handler: () => void order.push("plain") });
    const keyed = defineJob({ name: "keyed-one", schema: tenant, concurrency: { limit: 5, key: (p) => p.tenant }, handler: () => void order.push("keyed") });
    const jobs = await h.isolated([plain, keyed]);
    await jobs.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: "plain-one" as const, payload: { n } })));
    await jobs.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ job: "keyed-one" as const, payload: { tenant: `t${n}`, n } })));
    expect(await jobs.tick({ budgetMs: 5_000, concurrency: 1 })).toMatchObject({ succeeded: 24 });
    expect(order.slice(0, 8).filter((k) => k === "keyed")).toHaveLength(4);
  });

  it("ticks of one slot that claim once each take turns too (each tick gave it to the unkeyed side, and keyed jobs waited for all of them)", async () => {
    const order: string[] = [];
    const plain = defineJob({ name: "plain-long", schema: z.object({ n: z.number() }), handler: async () => void order.push("plain") });
    const keyed = defineJob({ name: "keyed-long", schema: tenant, concurrency: { limit: 5, key: (p) => p.tenant }, handler: async () => void order.push("keyed") });
    const jobs = await h.isolated([plain, keyed]);
    await jobs.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ job: "plain-long" as const, payload: { n } })));
    await jobs.enqueueMany(Array.from({ length: 4 }, (_, n) => ({ job: "keyed-long" as const, payload: { tenant: `t${n}`, n } })));
    // Past the claim cutoff from the start: each tick claims once, as one of long jobs under a platform's budget does.
    for (let i = 0; i < 4; i++) expect(await jobs.tick({ budgetMs: 2_000, claimCutoffMs: 1_000, concurrency: 1, claimForMs: 1 })).toMatchObject({ claimed: 1 });
    expect(order.filter((k) => k === "keyed")).toHaveLength(2);
  });
});

describe("a claim whose candidates all have room", () => {
  // The admission takes such a claim at once instead of job by job: exactly up to the limits, and with
  // the rate window's starts written, so the next claim sees the window full.
  it("takes up to a concurrency limit and no further", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const work = defineJob({ name: "roomy", schema: tenant, concurrency: { limit: 4, key: (p) => p.tenant }, handler: () => gate });
    const jobs = await h.isolated([work], { claimIntervalMs: 20 });
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "roomy" as const, payload: { tenant: "a", n } })));
    const running = async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running'`))[0]!.n;
    // A budget with room for a loaded machine: the claims after the release must all fit before the cutoff.
    const tick = jobs.tick({ budgetMs: 10_000, concurrency: 8, batchSize: 8, claimCutoffMs: 100 });
    await expect.poll(running, { timeout: 4_000 }).toBe(4);
    // Claims at the claim interval find the key at its limit.
    await sleep(200);
    expect(await running()).toBe(4);
    release();
    const report = await tick;
    // Released, the key takes four more at a time until all ten have run.
    expect(report.succeeded).toBe(10);
  });

  it("writes the starts it admits into the rate window, so the window holds", async () => {
    const starts: number[] = [];
    const work = defineJob({ name: "roomy-rate", schema: tenant, rateLimit: { limit: 4, periodMs: 60_000, key: (p) => p.tenant }, handler: () => void starts.push(Date.now()) });
    const jobs = await h.isolated([work], { claimIntervalMs: 20 });
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "roomy-rate" as const, payload: { tenant: "a", n } })));
    const report = await jobs.tick({ budgetMs: 800, concurrency: 4, batchSize: 4, claimCutoffMs: 100 });
    expect(report.succeeded).toBe(4);
    expect(starts).toHaveLength(4);
    const [w] = await h.rows<{ n: number }>(`SELECT cardinality(starts)::int AS n FROM ${jobs.tables.flow} WHERE bucket LIKE 'r:%'`);
    expect(w!.n).toBe(4);
  });
});

describe("no limits in code", () => {
  /** The tick's claim statements, in order, as the database received them. */
  const recording = () => {
    const claims: string[] = [];
    const db = {
      query: <R>(text: string, params?: readonly unknown[], options?: { prepare?: boolean; timeoutMs?: number }) => {
        if (/\bclaimed AS \(/.test(text)) claims.push(text);
        return h.db.query<R>(text, params, options);
      },
    };
    return { db, claims, admitting: () => claims.map((c) => c.includes("flow_admit(")) };
  };

  it("a claim leaves the admission out once the tick has found no keyed job queued", async () => {
    const { db, admitting } = recording();
    const plain = defineJob({ name: "plain", schema: z.object({ n: z.number() }), handler: () => {} });
    const jobs = await h.isolated([plain], {}, db);
    await jobs.enqueueMany(Array.from({ length: 24 }, (_, n) => ({ job: "plain" as const, payload: { n } })));
    expect(await jobs.tick({ budgetMs: 5_000, concurrency: 4, batchSize: 4 })).toMatchObject({ succeeded: 24 });
    const seen = admitting();
    expect(seen.length).toBeGreaterThanOrEqual(6);
    expect(seen).toEqual([true, ...seen.slice(1).map(() => false)]);
  });

  it("jobs keyed by limits since removed keep the admission in every claim until none is queued, and all run", async () => {
    const limited = defineJob({ name: "was-limited", schema: tenant, concurrency: { limit: 1, key: (p) => p.tenant }, handler: () => {} });
    const before = await h.isolated([limited]);
    await before.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: "was-limited" as const, payload: { tenant: `t${n % 3}`, n } })));
    const { db, admitting } = recording();
    const free = defineJob({ name: "was-limited", schema: tenant, handler: () => {} });
    const after = h.make([free], { tablePrefix: before.settings.tablePrefix }, db);
    await after.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: "was-limited" as const, payload: { tenant: "none", n } })));
    expect(await after.tick({ budgetMs: 5_000, concurrency: 2, batchSize: 2 })).toMatchObject({ succeeded: 24 });
    const seen = admitting();
    // The claims that took keyed jobs all carried the admission; once none was left, it was left out.
    const last = seen.lastIndexOf(true);
    expect(last).toBeGreaterThanOrEqual(5);
    expect(seen.slice(0, last + 1).every(Boolean)).toBe(true);
  });
});

describe("rate limits", () => {
  it("no window of periodMs sees more than `limit` starts of a key; several limits all hold", async () => {
    const starts: Array<{ key: string; at: number }> = [];
    const limited = defineJob({
      name: "rated",
      schema: tenant,
      rateLimit: [{ limit: 3, periodMs: 400, key: (p) => p.tenant }, { limit: 8, periodMs: 2_000 }],
      handler: async ({ tenant: t }) => void starts.push({ key: t, at: Date.now() }),
    });
    const jobs = await h.isolated([limited], { claimIntervalMs: 20 });
    await jobs.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: "rated" as const, payload: { tenant: n % 2 ? "a" : "b", n } })));
    await jobs.tick({ budgetMs: 1_500, claimCutoffMs: 100 });
    // Per key, 3 in any 400 ms; over both keys, 8 in 2 s: the 1.5 s tick starts 8 and leaves 4.
    expect(starts).toHaveLength(8);
    for (const key of ["a", "b"]) {
      const mine = starts.filter((s) => s.key === key).map((s) => s.at);
      for (const s of mine) expect(mine.filter((t) => t >= s && t < s + 400).length).toBeLessThanOrEqual(3);
    }
  });

  it("stamps each run with the instant its rate windows count, one per claim, the windows in order", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // Twelve keys: the admission finds them over several rounds, each round's buckets locked apart.
    const work = defineJob({ name: "stamped", schema: tenant, rateLimit: { limit: 100, periodMs: 60_000, key: (p) => p.tenant }, handler: () => gate });
    const jobs = await h.isolated([work]);
    await jobs.enqueueMany(Array.from({ length: 12 }, (_, n) => ({ job: "stamped" as const, payload: { tenant: `t${n}`, n } })));
    const tick = jobs.tick({ budgetMs: 3_000, concurrency: 12, batchSize: 12 });
    const running = async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE status = 'running'`))[0]!.n;
    await expect.poll(running).toBe(12);
    const instants = async (sql: string) => (await h.rows<{ at: string }>(sql)).map((r) => r.at);
    const stamped = await instants(`SELECT DISTINCT updated_at::text AS at FROM ${jobs.tables.queue} WHERE status = 'running' ORDER BY 1`);
    const counted = await instants(`SELECT DISTINCT s::text AS at FROM ${jobs.tables.flow}, unnest(starts) s WHERE bucket LIKE 'r:%' ORDER BY 1`);
    expect(counted).toEqual(stamped);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.flow} WHERE starts <> ARRAY(SELECT s FROM unnest(starts) s ORDER BY s)`)).toEqual([{ n: 0 }]);
    release();
    expect(await tick).toMatchObject({ succeeded: 12 });
  });

  it("a group shares one limit across job types", async () => {
    const starts: number[] = [];
    const rule = { limit: 2, periodMs: 60_000, group: "email-provider" };
    const a = defineJob({ name: "mail-a", schema: z.object({}), rateLimit: rule, handler: () => void starts.push(1) });
    const b = defineJob({ name: "mail-b", schema: z.object({}), rateLimit: rule, handler: () => void starts.push(2) });
    const jobs = await h.isolated([a, b]);
    await jobs.enqueueMany([{ job: "mail-a" as const, payload: {} }, { job: "mail-a" as const, payload: {} }, { job: "mail-b" as const, payload: {} }, { job: "mail-b" as const, payload: {} }]);
    await jobs.tick({ budgetMs: 1_000 });
    expect(starts).toHaveLength(2);
  });

  it("a group declared differently by two jobs is refused at createJobs", async () => {
    const a = defineJob({ name: "g-a", schema: z.object({}), rateLimit: { limit: 2, periodMs: 1_000, group: "g" }, handler: () => {} });
    const b = defineJob({ name: "g-b", schema: z.object({}), rateLimit: { limit: 3, periodMs: 1_000, group: "g" }, handler: () => {} });
    expect(() => h.make([a, b])).toThrow(/group g \(1000 ms\) is 2 in job g-a but 3 in job g-b/);
    // Another period, or a rule more, is declared differently too: it would count in buckets of its own.
    const c = defineJob({ name: "g-c", schema: z.object({}), rateLimit: { limit: 2, periodMs: 999, group: "g" }, handler: () => {} });
    expect(() => h.make([a, c])).toThrow(/group g is 2 per 1000 ms in job g-a but 2 per 999 ms in job g-c/);
    const d = defineJob({ name: "g-d", schema: z.object({}), rateLimit: [{ limit: 2, periodMs: 1_000, group: "g" }, { limit: 9, periodMs: 60_000, group: "g" }], handler: () => {} });
    expect(() => h.make([a, d])).toThrow(/jobs sharing a group must declare it alike/);
    expect(() => h.make([d, defineJob({ ...d, name: "g-e" })])).not.toThrow();
  });

  it("two rate limits of one period on a job are refused with the way to have both: a group of one job", async () => {
    const rates = (second: object) => defineJob({ name: "sync", schema: tenant, rateLimit: [{ limit: 10, periodMs: 60_000, key: (p) => p.tenant }, { limit: 100, periodMs: 60_000, ...second }], handler: () => {} });
    expect(() => h.make([rates({})])).toThrow(/two rate limits of 60000 ms: give one a group of its own \(group: "sync-all"\)/);
    expect(() => h.make([rates({ group: "sync-all" })])).not.toThrow();
  });

  it("two limited jobs whose names could share a bucket (one is the other's and a colon) are refused at createJobs", async () => {
    const limited = (name: string) => defineJob({ name, schema: tenant, concurrency: { limit: 1, key: (p) => p.tenant }, handler: () => {} });
    expect(() => h.make([limited("mail"), limited("mail:send")])).toThrow(/jobs mail and mail:send both have limits/);
    // Names between them in sorted order ("mail-x": "-" sorts before ":"), in any order of definition.
    expect(() => h.make([limited("mail:send"), limited("mail-x"), limited("mail.y"), limited("mail")])).toThrow(/jobs mail and mail:send both have limits/);
    expect(() => h.make([limited("mail"), defineJob({ name: "mail:send", schema: tenant, handler: () => {} })])).not.toThrow();
  });

  it("two rate groups whose buckets could be one (one group's scope is the other's and a colon) are refused at createJobs", async () => {
    // Group x per 60 s with key "5:k" and group "x:60000" per 5 ms with key "k" would both count in r:g:x:60000:5:k.
    const a = defineJob({ name: "grp-a", schema: tenant, rateLimit: { limit: 1, periodMs: 60_000, group: "x" }, handler: () => {} });
    const b = defineJob({ name: "grp-b", schema: tenant, rateLimit: { limit: 100, periodMs: 5, group: "x:60000" }, handler: () => {} });
    expect(() => h.make([a, b])).toThrow(/rate limits of group x \(60000 ms\) and group x:60000 \(5 ms\) could count in the same bucket; rename a group/);
    expect(() => h.make([a, defineJob({ ...b, rateLimit: { limit: 100, periodMs: 5, group: "x-60000" } })])).not.toThrow();
  });

  it("a job named __proto__ keeps its limits (they reach the claim like any job's)", async () => {
    let running = 0;
    let most = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const proto = defineJob({
      name: "__proto__",
      schema: tenant,
      concurrency: { limit: 1 },
      handler: async () => {
        most = Math.max(most, ++running);
        await gate;
        running--;
      },
    });
    const jobs = await h.isolated([proto]);
    await jobs.enqueueMany([1, 2, 3].map((n) => ({ job: "__proto__" as const, payload: { tenant: "t", n } })));
    const tick = jobs.tick({ budgetMs: 3_000, concurrency: 5 });
    await sleep(300);
    release();
    await tick;
    expect(most).toBe(1);
  });

  it("stats credit a running bucket to the job with the limit when one job's name is another's and a colon", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const plain = defineJob({ name: "mail", schema: tenant, handler: () => {} });
    const limited = defineJob({ name: "mail:send", schema: tenant, concurrency: { limit: 2, key: (p) => p.tenant }, handler: () => gate });
    const jobs = await h.isolated([plain, limited]);
    await jobs.enqueue("mail:send", { tenant: "bob", n: 1 });
    const ticking = jobs.tick({ budgetMs: 3_000 });
    await expect.poll(async () => (await jobs.stats()).flowRunning).toEqual([{ bucket: "c:mail:send:bob", running: 1, job: "mail:send", key: "bob", limit: 2 }]);
    release();
    await ticking;
  });
});

describe("definitions and keys", () => {
  it("refuses bad limits when the job is defined", () => {
    const base = { name: "bad", schema: z.object({}), handler: () => {} };
    expect(() => defineJob({ ...base, concurrency: { limit: 0 } })).toThrow("job bad: concurrency.limit must be an integer from 1 to 100000");
    expect(() => defineJob({ ...base, rateLimit: { limit: 1, periodMs: 0 } })).toThrow("job bad: rateLimit.periodMs must be");
    expect(() => defineJob({ ...base, rateLimit: [{ limit: 1, periodMs: 10 }, { limit: 0.5, periodMs: 10 }] })).toThrow("rateLimit[1].limit");
    // A misspelt field: before, taken silently (no key: every job in one bucket; no group: no limit shared).
    expect(() => defineJob({ ...base, concurrency: { limit: 1, keys: () => "t" } as never })).toThrow("job bad: concurrency has no field keys (it takes limit, key)");
    expect(() => defineJob({ ...base, rateLimit: { limit: 1, periodMs: 10, grop: "g" } as never })).toThrow("job bad: rateLimit has no field grop (it takes limit, periodMs, key, group)");
    expect(() => defineJob({ ...base, rateLimit: [{ limit: 1, periodMs: 10 }, { limit: 1, periodMs: 20, period: 5 }] as never })).toThrow("rateLimit[1] has no field period");
  });

  it("a key function that throws or returns no string is invalid_options, and stores nothing", async () => {
    const odd = defineJob({ name: "odd-key", schema: tenant, concurrency: { limit: 1, key: (p) => (p.n === 1 ? (null as unknown as string) : p.n === 2 ? "" : p.n === 3 ? "a\u0000" : p.tenant) }, handler: () => {} });
    const throws = defineJob({ name: "throwing-key", schema: tenant, rateLimit: { limit: 1, periodMs: 10, key: () => { throw new Error("no tenant"); } }, handler: () => {} });
    const jobs = await h.isolated([odd, throws]);
    for (const [job, n, message] of [["odd-key", 1, "concurrency.key of job odd-key must return a string"], ["odd-key", 2, "must return a string"], ["odd-key", 3, "must return a string of 1 to 255 characters without U+0000 or a lone surrogate"], ["throwing-key", 0, "rateLimit.key of job throwing-key threw: no tenant"]] as const) {
      const e = await jobs.enqueueUnchecked([{ job, payload: { tenant: "t", n } }]).catch((x: unknown) => x);
      expect(isJobsError(e) && e.code === "invalid_options" && e.message.includes(message)).toBe(true);
    }
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
  });
});

describe("key functions returning what JSON cannot hold", () => {
  it("a bigint, a circular object, a throw of a null-prototype object or a 5 MB string: invalid_options with a short message", async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const returns = [10n, circular, "x".repeat(5_000_000)];
    const odd = defineJob({ name: "odd-value", schema: tenant, concurrency: { limit: 1, key: (p) => returns[p.n] as string }, handler: () => {} });
    const bare = defineJob({ name: "bare-throw", schema: tenant, concurrency: { limit: 1, key: () => { throw Object.create(null); } }, handler: () => {} });
    const jobs = await h.isolated([odd, bare]);
    const expected = [
      ["odd-value", 0, 'got bigint "10n"'],
      ["odd-value", 1, 'got object {"self":"[circular]"}'],
      ["odd-value", 2, "got a string of 5000000 characters"],
      ["bare-throw", 0, "concurrency.key of job bare-throw threw: {}"],
    ] as const;
    for (const [job, n, message] of expected) {
      const e = await jobs.enqueueUnchecked([{ job, payload: { tenant: "t", n } }]).catch((x: unknown) => x);
      expect(isJobsError(e) && e.code === "invalid_options", String(e)).toBe(true);
      expect((e as Error).message).toContain(message);
      expect((e as Error).message.length).toBeLessThan(300);
    }
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${jobs.tables.queue}`)).toEqual([{ n: 0 }]);
  });
});

describe("debounce", () => {
  it("50 concurrent enqueues with one key keep one queued job; the last enqueue's payload wins; once it runs, a new one starts", async () => {
    const seen: number[] = [];
    const reindex = defineJob({ name: "reindex", schema: z.object({ v: z.number() }), handler: ({ v }) => void seen.push(v) });
    const jobs = await h.isolated([reindex]);
    const results = await Promise.all(Array.from({ length: 50 }, (_, v) => jobs.enqueue("reindex", { v }, { debounce: { key: "user:1", delayMs: 0 } })));
    const last = await jobs.enqueue("reindex", { v: 999 }, { debounce: { key: "user:1", delayMs: 0 } });
    expect(new Set(results.map((r) => r.id))).toEqual(new Set([last.id]));
    expect(results.filter((r) => !r.debounced)).toHaveLength(1);
    expect(last).toEqual({ id: results[0]!.id, deduplicated: false, debounced: true });
    expect(await h.rows(`SELECT payload FROM ${jobs.tables.queue}`)).toEqual([{ payload: { v: 999 } }]);
    await jobs.tick({ budgetMs: 2_000 });
    expect(seen).toEqual([999]);
    const again = await jobs.enqueue("reindex", { v: 1 }, { debounce: { key: "user:1", delayMs: 60_000 } });
    expect(again.id).not.toBe(last.id);
    expect(again.debounced).toBe(false);
  });

  it("moves the queued job to now + delayMs each time, and refuses debounce with runAt, delayMs or an idempotency key", async () => {
    const reindex = defineJob({ name: "reindex2", schema: z.object({}), handler: () => {} });
    const jobs = await h.isolated([reindex]);
    const a = await jobs.enqueue("reindex2", {}, { debounce: { key: "k", delayMs: 60_000 } });
    await sleep(50);
    await jobs.enqueue("reindex2", {}, { debounce: { key: "k", delayMs: 120_000 } });
    const [row] = await h.rows<{ wait: number }>(`SELECT (extract(epoch FROM run_at - now()) * 1000)::float8 AS wait FROM ${jobs.tables.queue} WHERE id = $1`, [a.id]);
    expect(row!.wait).toBeGreaterThan(110_000);
    for (const debounce of [{ delayMs: 5 }, { key: null, delayMs: 5 }]) {
      const e = await jobs.enqueueUnchecked([{ job: "reindex2", payload: {}, debounce: debounce as never }]).catch((x: unknown) => x);
      expect(isJobsError(e) && e.code === "invalid_options" && e.details).toMatchObject({ field: "debounce.key" });
    }
    for (const opts of [{ delayMs: 5 }, { runAt: new Date() }, { idempotencyKey: "x" }]) {
      const e = await jobs.enqueue("reindex2", {}, { debounce: { key: "k", delayMs: 1 }, ...opts }).catch((x: unknown) => x);
      expect(isJobsError(e) && e.code === "invalid_options").toBe(true);
    }
  });
});
