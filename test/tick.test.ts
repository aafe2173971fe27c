import { describe, expect, it } from "vitest";
import { z } from "zod";
import { countingDb, createJobs, type Db, type QueryOptions, defineJob, fromPg, jsonLogger, PermanentJobError, resolveSettings } from "../src/index.js";
import { tickLimits } from "../src/tick/limits.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("tick");

// Each test has its own tables (h.isolated), so rows from other tests never interfere.
type J = { tables: { queue: string; deadLetters: string } };
const deadRow = async (j: J, id: string) => (await h.rows(`SELECT * FROM ${j.tables.deadLetters} WHERE id = $1`, [id]))[0];
const queueRow = async (j: J, id: string) => (await h.rows(`SELECT * FROM ${j.tables.queue} WHERE id = $1`, [id]))[0];

describe("tick", () => {
  it("runs a due job with its typed payload and context, then deletes it", async () => {
    const calls: unknown[] = [];
    const greet = defineJob({
      name: "greet",
      schema: z.object({ name: z.string(), times: z.number().default(1) }),
      handler: (payload, ctx) => void calls.push({ payload, jobId: ctx.jobId, attempt: ctx.attempt, correlationId: ctx.correlationId, aborted: ctx.signal.aborted }),
    });
    const jobs = await h.isolated([greet]);
    const { id } = await jobs.enqueue("greet", { name: "Ada" }, { correlationId: "req-1" });
    const report = await jobs.tick({ budgetMs: 10_000 });
    expect(calls).toEqual([{ payload: { name: "Ada", times: 1 }, jobId: id, attempt: 1, correlationId: "req-1", aborted: false }]);
    expect(report).toMatchObject({ claimed: 1, succeeded: 1, retried: 0, deadLettered: 0, requeued: 0, leaseLost: 0 });
    expect(await queueRow(jobs, id)).toBeUndefined();
    const event = jobs.logs.find((e) => e.msg === "job succeeded");
    expect(event).toMatchObject({ jobId: id, jobName: "greet", attempt: 1, correlationId: "req-1", outcome: "succeeded" });
    expect(typeof event!.durationMs).toBe("number");
  });

  it("retries a failed attempt with jittered exponential backoff", async () => {
    const flaky = defineJob({ name: "flaky", schema: z.object({}), backoff: { baseMs: 20_000 }, handler: () => { throw new Error("upstream 503"); } });
    const jobs = await h.isolated([flaky]);
    const { id } = await jobs.enqueue("flaky", {});
    const report = await jobs.tick({ budgetMs: 10_000 });
    expect(report).toMatchObject({ claimed: 1, retried: 1, succeeded: 0 });
    const row = await queueRow(jobs, id);
    expect(row).toMatchObject({ status: "queued", attempt: 1, last_error: "upstream 503", lease_owner: null });
    // random() is fixed at 0.5 by the harness: 20s/2 + 0.5 * 20s/2 = 15s.
    const delay = new Date(row!.run_at as string).getTime() - Date.now();
    expect(delay).toBeGreaterThan(12_000);
    expect(delay).toBeLessThan(16_000);
    expect(jobs.logs.find((e) => e.msg === "job failed, will retry")).toMatchObject({ jobId: id, outcome: "retried", retryInMs: 15_000 });
  });

  it("dead-letters after the last attempt, with the reason and error", async () => {
    const failing = defineJob({ name: "always-fails", schema: z.object({ x: z.number() }), maxAttempts: 2, backoff: { baseMs: 0 }, handler: () => { throw new TypeError("bad"); } });
    const jobs = await h.isolated([failing]);
    const { id } = await jobs.enqueue("always-fails", { x: 1 });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1 });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1 });
    expect(await queueRow(jobs, id)).toBeUndefined();
    expect(await deadRow(jobs, id)).toMatchObject({ job_name: "always-fails", payload: { x: 1 }, attempts: 2, reason: "exhausted", last_error: "TypeError: bad" });
  });

  it("dead-letters a PermanentJobError at once, with no retry", async () => {
    const permanent = defineJob({ name: "permanent", schema: z.object({}), maxAttempts: 5, handler: () => { throw new PermanentJobError("account deleted"); } });
    const jobs = await h.isolated([permanent]);
    const { id } = await jobs.enqueue("permanent", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1, retried: 0 });
    expect(await deadRow(jobs, id)).toMatchObject({ attempts: 1, reason: "permanent", last_error: "PermanentJobError: account deleted" });
  });

  it("dead-letters a stored payload that no longer parses under the current schema", async () => {
    const v1 = defineJob({ name: "evolving", schema: z.object({ email: z.string() }), handler: () => {} });
    const v2 = defineJob({ name: "evolving", schema: z.object({ address: z.string() }), handler: () => {} });
    const old = await h.isolated([v1]);
    const { id } = await old.enqueue("evolving", { email: "a@b.c" });
    const jobs = h.make([v2], { tablePrefix: old.settings.tablePrefix });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    const dead = await deadRow(jobs, id);
    expect(dead).toMatchObject({ reason: "invalid_payload", attempts: 1 });
    expect(dead!.last_error).toContain("address");
  });

  it("dead-letters a job whose schema throws while parsing, and keeps going", async () => {
    const lenient = defineJob({ name: "json-in-string", schema: z.object({ s: z.string() }), handler: () => {} });
    const strict = defineJob({
      name: "json-in-string",
      schema: z.object({ s: z.string().transform((s) => JSON.parse(s) as unknown) }),
      handler: () => {},
    });
    const old = await h.isolated([lenient]);
    const { id } = await old.enqueue("json-in-string", { s: "{not json" });
    const jobs = h.make([strict], { tablePrefix: old.settings.tablePrefix });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1, requeued: 0 });
    const dead = await deadRow(jobs, id);
    expect(dead).toMatchObject({ reason: "invalid_payload" });
    expect(dead!.last_error).toContain("the schema failed");
  });

  it("never loses a job whose handler is missing here: retried, then dead-lettered naming the handler", async () => {
    const orphan = defineJob({ name: "orphan", schema: z.object({}), maxAttempts: 2, handler: () => {} });
    const jobs = await h.isolated([orphan]);
    const { id } = await jobs.enqueue("orphan", {});
    const other = h.make([], { tablePrefix: jobs.settings.tablePrefix });
    const first = await other.tick({ budgetMs: 10_000 });
    expect(first).toMatchObject({ claimed: 1, retried: 1 });
    expect(await queueRow(jobs, id)).toMatchObject({ status: "queued", last_error: 'no handler for job "orphan" in this deployment' });
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [id]);
    expect(await other.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    expect(await deadRow(jobs, id)).toMatchObject({ reason: "no_handler", last_error: 'no handler for job "orphan" in this deployment' });
  });

  it("aborts a run at the job's own timeout and counts it as a failed attempt", async () => {
    let aborted: unknown;
    const slow = defineJob({
      name: "slow-timeout",
      schema: z.object({}),
      timeoutMs: 100,
      handler: (_p, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => { aborted = ctx.signal.reason; resolve(undefined); })),
    });
    const jobs = await h.isolated([slow]);
    const { id } = await jobs.enqueue("slow-timeout", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ retried: 1 });
    expect(String(aborted)).toContain("timed out after 100 ms");
    expect(await queueRow(jobs, id)).toMatchObject({ status: "queued", last_error: "JobTimeout: timed out after 100 ms" });
  });

  it("a handler that ignores its timeout keeps its slot until it returns, so concurrency holds", async () => {
    let inFlight = 0;
    let peak = 0;
    const stubborn = defineJob({
      name: "stubborn",
      schema: z.object({}),
      timeoutMs: 50,
      backoff: { baseMs: 0 },
      handler: async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(300); // ignores ctx.signal
        inFlight--;
      },
    });
    const jobs = await h.isolated([stubborn]);
    await jobs.enqueueMany([{ job: "stubborn", payload: {} }, { job: "stubborn", payload: {} }]);
    const report = await jobs.tick({ budgetMs: 5_000, concurrency: 1 });
    expect(report.retried).toBeGreaterThanOrEqual(2);
    expect(peak).toBe(1);
  });

  it("requeues a run that outlives the budget before returning; its late completion is fenced out", async () => {
    let finish!: () => void;
    const released = new Promise<void>((r) => (finish = r));
    let signalAborted = false;
    let completions = 0;
    const long = defineJob({
      name: "long-run",
      schema: z.object({}),
      handler: async (_p, ctx) => {
        ctx.signal.addEventListener("abort", () => (signalAborted = true));
        await released; // ignores the signal on purpose
        completions++;
      },
    });
    const jobs = await h.isolated([long]);
    const { id } = await jobs.enqueue("long-run", {});
    const report = await jobs.tick({ budgetMs: 400, claimCutoffMs: 100 });
    expect(report).toMatchObject({ claimed: 1, requeued: 1, succeeded: 0, requeuedIds: [id] });
    expect(signalAborted).toBe(true);
    expect(jobs.logs.find((e) => e.msg === "tick deadline: requeueing running jobs")).toMatchObject({ level: "error", jobIds: [id] });
    // Claimable at once by another tick, which now owns it.
    expect(await queueRow(jobs, id)).toMatchObject({ status: "queued", lease_owner: null, attempt: 1, last_error: expect.stringContaining("deadline") });
    const [reclaimed] = await h.rows<{ lease_owner: string }>(
      `UPDATE ${jobs.tables.queue} SET status = 'running', lease_owner = gen_random_uuid(), attempt = attempt + 1 WHERE id = $1 RETURNING lease_owner`, [id]);
    // The first run finishes late: its write is refused by the fence.
    finish();
    await expect.poll(() => jobs.logs.some((e) => e.msg === "lease lost" && e.jobId === id && e.late === true)).toBe(true);
    expect(completions).toBe(1);
    expect(await queueRow(jobs, id)).toMatchObject({ status: "running", lease_owner: reclaimed!.lease_owner, attempt: 2 });
  });

  it("dead-letters a job that never fits in a budget once its attempts are spent", async () => {
    const never = defineJob({ name: "never-fits", schema: z.object({}), maxAttempts: 2, handler: () => sleep(2_000) });
    const jobs = await h.isolated([never]);
    const { id } = await jobs.enqueue("never-fits", {});
    expect(await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 })).toMatchObject({ requeued: 1 });
    expect(await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 })).toMatchObject({ requeued: 0, deadLettered: 1, requeuedIds: [] });
    expect(await deadRow(jobs, id)).toMatchObject({ reason: "deadline", attempts: 2 });
  });

  it("takes a lease that covers the rest of the budget plus the margin, so no heartbeat is needed", async () => {
    let lease: Date | undefined;
    const probe = defineJob({
      name: "lease-probe",
      schema: z.object({}),
      handler: async (_p, ctx) => {
        const [row] = await h.rows<{ lease_expires_at: Date }>(`SELECT lease_expires_at FROM ${jobs.tables.queue} WHERE id = $1`, [ctx.jobId]);
        lease = row!.lease_expires_at;
      },
    });
    const jobs = await h.isolated([probe], { leaseMs: 1_000, leaseMarginMs: 7_000 });
    await jobs.enqueue("lease-probe", {});
    const started = Date.now();
    await jobs.tick({ budgetMs: 120_000 });
    // At least budget + margin from the claim (minus the little time before it), never just JOBS_LEASE.
    expect(lease!.getTime() - started).toBeGreaterThan(120_000 + 7_000 - 2_000);
  });

  it("runs at most `concurrency` handlers at once and claims no more than its free slots", async () => {
    let inFlight = 0;
    let peak = 0;
    const busy = defineJob({
      name: "busy",
      schema: z.object({ i: z.number() }),
      handler: async () => {
        peak = Math.max(peak, ++inFlight);
        await sleep(5);
        inFlight--;
      },
    });
    const jobs = await h.isolated([busy]);
    await jobs.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ job: "busy" as const, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 20_000, concurrency: 4 });
    expect(report.succeeded).toBe(60);
    expect(peak).toBe(4);
  });

  it("gives each run its own signal: many handlers listening at once set off no listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const listening = defineJob({
        name: "listening",
        schema: z.object({ i: z.number() }),
        handler: async (_p, ctx) => {
          ctx.signal.addEventListener("abort", () => {}); // as fetch(url, { signal }) does
          await sleep(20);
        },
      });
      const jobs = await h.isolated([listening]);
      await jobs.enqueueMany(Array.from({ length: 40 }, (_, i) => ({ job: "listening" as const, payload: { i } })));
      expect(await jobs.tick({ budgetMs: 10_000, concurrency: 20 })).toMatchObject({ succeeded: 40 });
      await new Promise((r) => setImmediate(r)); // warnings are emitted on the next turn
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("settles in batches: far fewer statements than jobs", async () => {
    const noop = defineJob({ name: "noop-batch", schema: z.object({ i: z.number() }), handler: () => {} });
    const db = countingDb(h.db);
    const jobs = await h.isolated([noop], {}, db);
    await jobs.enqueueMany(Array.from({ length: 400 }, (_, i) => ({ job: "noop-batch" as const, payload: { i } })));
    db.statements = 0;
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 40 });
    expect(report.succeeded).toBe(400);
    expect(report.statements).toBe(db.statements);
    // A claim takes all the free slots by default (about 400 / 40 of them), and with two statements
    // at once the settlements of each batch go out on their own statement beside the next claim.
    expect(report.statements / 400).toBeLessThan(0.07);
  });

  it("settles a batch on its own statement while the next claim is out, not in the claim's", async () => {
    const noop = defineJob({ name: "noop-apart", schema: z.object({ i: z.number() }), handler: () => {} });
    const inner = fromPg(h.pool(3));
    const out = new Set<string>();
    const sent = { settle: 0, both: 0 };
    // Settles sent while the claim beside them was already out: the claim goes first.
    let settleAfterClaim = 0;
    const db: Db = {
      statementsAtOnce: inner.statementsAtOnce,
      async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
        const kind = text.includes("claimed AS (") ? (text.includes("completed AS (") ? "both" : "claim") : text.includes("completed AS (") ? "settle" : "other";
        const id = `${kind}:${Math.random()}`;
        out.add(id);
        if (kind === "settle" || kind === "both") sent[kind]++;
        if (kind === "settle" && [...out].some((o) => o.startsWith("claim:"))) settleAfterClaim++;
        try {
          const result = await inner.query<R>(text, params, options);
          await sleep(5);
          return result;
        } finally {
          out.delete(id);
        }
      },
    };
    const jobs = await h.isolated([noop], {}, db);
    await jobs.enqueueMany(Array.from({ length: 320 }, (_, i) => ({ job: "noop-apart" as const, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 32 });
    expect(report.succeeded).toBe(320);
    // Ten batches of 32, settled a few at a time (pump-plan.test.ts says when), each settle sent just after a
    // claim (all but perhaps the last, when nothing is left to claim), and no claim carrying settlements.
    expect(sent.settle).toBeGreaterThanOrEqual(3);
    expect(settleAfterClaim).toBeGreaterThanOrEqual(sent.settle - 1);
    expect(sent.both).toBe(0);
  });

  /**
   * Drains 128 jobs at concurrency 32 through `inner`, with every statement taking 40 ms more and
   * half the runs ending 15 ms after the others (while the first half's settle-and-claim is still
   * out). Returns the most statements that were out at once.
   */
  const mostOutAtOnce = async (name: string, inner: Db): Promise<number> => {
    const job = defineJob({
      name,
      schema: z.object({ i: z.number() }),
      handler: async (payload) => {
        if (payload.i % 2 === 1) await sleep(15);
      },
    });
    let out = 0;
    let most = 0;
    const db: Db = {
      statementsAtOnce: inner.statementsAtOnce,
      async query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
        most = Math.max(most, ++out);
        try {
          const result = await inner.query<R>(text, params, options);
          await sleep(40);
          return result;
        } finally {
          out--;
        }
      },
    };
    const jobs = await h.isolated([job], {}, db);
    await jobs.enqueueMany(Array.from({ length: 128 }, (_, i) => ({ job: name, payload: { i } })));
    const report = await jobs.tick({ budgetMs: 30_000, concurrency: 32 });
    expect(report.succeeded).toBe(128);
    return most;
  };

  it("sends a second statement for the slots that free while one is out", async () => {
    expect(await mostOutAtOnce("noop-pipe", fromPg(h.pool(3)))).toBe(2);
  });

  it("claims all its free slots per statement by default", () => {
    const s = resolveSettings({});
    const limits = (concurrency: number, statementsAtOnce?: number) => tickLimits(s, { concurrency }, statementsAtOnce);
    expect([1, 10, 16, 20, 32, 33, 100].map((c) => limits(c).batchSize)).toEqual([1, 10, 16, 20, 32, 33, 100]);
    expect([limits(100).inFlight, limits(100, 1).inFlight]).toEqual([2, 1]);
    expect(tickLimits(resolveSettings({ batchSize: 7 }), { concurrency: 32 }).batchSize).toBe(7);
    expect(tickLimits(resolveSettings({ batchSize: 70 }), { concurrency: 32 }).batchSize).toBe(32);
  });

  it("on a single connection keeps one statement in flight: a second one would only wait", async () => {
    const one = fromPg(h.pool(1));
    expect(one.statementsAtOnce).toBe(1);
    expect(await mostOutAtOnce("noop-one", one)).toBe(1);
  });

  it("an idle tick is one statement, returns early, and records that it ran", async () => {
    const db = countingDb(h.db);
    const jobs = await h.isolated([], {}, db);
    db.statements = 0;
    const [before] = await h.rows(`SELECT last_tick_at FROM ${jobs.tables.state}`);
    expect(before).toEqual({ last_tick_at: null });
    const report = await jobs.tick({ budgetMs: 60_000 });
    expect(db.statements).toBe(1);
    expect(report.statements).toBe(1);
    // It returned as soon as nothing was due, not at its 60 s deadline.
    expect(report.durationMs).toBeLessThan(10_000);
    const [state] = await h.rows<{ last_tick_at: Date | null }>(`SELECT last_tick_at FROM ${jobs.tables.state}`);
    expect(state!.last_tick_at).not.toBeNull();
  });

  it("records per-job metrics per minute and the last busy tick's report", async () => {
    let n = 0;
    const mixed = defineJob({ name: "mixed", schema: z.object({}), maxAttempts: 1, handler: () => { if (n++ % 2) throw new Error("odd"); } });
    const jobs = await h.isolated([mixed]);
    await jobs.enqueueMany(Array.from({ length: 6 }, () => ({ job: "mixed" as const, payload: {} })));
    const report = await jobs.tick({ budgetMs: 10_000, concurrency: 1 });
    expect(report).toMatchObject({ succeeded: 3, deadLettered: 3 });
    const [m] = await h.rows(`SELECT sum(succeeded)::int AS s, sum(failed)::int AS f, sum(dead_lettered)::int AS d FROM ${jobs.tables.metrics} WHERE job_name = 'mixed'`);
    expect(m).toEqual({ s: 3, f: 3, d: 3 });
    // The tick's slot row holds its report: counted once, in SQL, by each of its statements.
    const [row] = await h.rows(`SELECT slot, claimed, succeeded, dead_lettered, finished_at IS NOT NULL AS finished FROM ${jobs.tables.ticks} WHERE slot = $1`, [report.slot]);
    expect(row).toEqual({ slot: 1, claimed: 6, succeeded: 3, dead_lettered: 3, finished: true });
    expect(report).toMatchObject({ claimed: 6, slot: 1, capped: false });
  });

  it("stops claiming when the caller's signal aborts, requeueing what runs", async () => {
    const wait = defineJob({ name: "wait-signal", schema: z.object({}), handler: () => sleep(1_000) });
    const jobs = await h.isolated([wait]);
    const { id } = await jobs.enqueue("wait-signal", {});
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const report = await jobs.tick({ budgetMs: 30_000, signal: controller.signal });
    expect(report).toMatchObject({ claimed: 1, requeued: 1, requeuedIds: [id] });
  });

  it("when a statement fails mid-tick, still settles what finished and requeues what runs, then throws", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
    const held = defineJob({ name: "held", schema: z.object({}), handler: () => gate });
    let statements = 0;
    // Fault injection in front of the real server: the third statement fails as a dropped connection would.
    const flaky: Db = {
      query: <R,>(text: string, params?: readonly unknown[]) =>
        ++statements === 3 ? Promise.reject(new Error("connection reset")) : h.db.query<R>(text, params),
    };
    const setup = await h.isolated([quick, held]);
    const jobs = h.make([quick, held], { tablePrefix: setup.settings.tablePrefix }, flaky);
    const { id: heldId } = await jobs.enqueue("held", {}, { priority: 1 });
    await jobs.enqueueMany([{ job: "quick", payload: {} }, { job: "quick", payload: {} }]);
    statements = 0;
    await expect(jobs.tick({ budgetMs: 20_000, concurrency: 3, batchSize: 1 })).rejects.toThrow("connection reset");
    open();
    // Statement 1 claims "held"; the next ones claim the quick jobs; the third fails. The final
    // statement still writes what finished and requeues what runs: nothing is left running or lost.
    const left = await h.rows<{ id: string; job_name: string; status: string; attempt: number }>(
      `SELECT id, job_name, status, attempt FROM ${jobs.tables.queue} ORDER BY job_name, attempt`);
    expect(left.filter((r) => r.status === "running")).toEqual([]);
    expect(left[0]).toEqual({ id: heldId, job_name: "held", status: "queued", attempt: 1 });
    const [done] = await h.rows<{ n: number }>(`SELECT coalesce(sum(succeeded), 0)::int AS n FROM ${jobs.tables.metrics} WHERE job_name = 'quick'`);
    expect(done!.n + left.filter((r) => r.job_name === "quick").length).toBe(2);
    // The held run finishes late: its write is refused by the fence.
    await expect.poll(() => jobs.logs.some((e) => e.msg === "lease lost" && e.jobId === heldId && e.late === true)).toBe(true);
    expect(jobs.logs.find((e) => e.msg === "tick statement failed")).toMatchObject({ level: "error", error: "connection reset" });
  });

  it("skips a due row another transaction has locked instead of waiting for it (FOR UPDATE SKIP LOCKED)", async () => {
    const work = defineJob({ name: "lockable", schema: z.object({ n: z.number() }), handler: () => {} });
    const jobs = await h.isolated([work]);
    const { id: locked } = await jobs.enqueue("lockable", { n: 0 }, { priority: 10 });
    await jobs.enqueueMany([1, 2, 3].map((n) => ({ job: "lockable" as const, payload: { n } })));
    const holder = await h.main.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT id FROM ${jobs.tables.queue} WHERE id = $1 FOR UPDATE`, [locked]);
      // With a plain FOR UPDATE the claim would wait here until the holder lets go (after the tick).
      const report = await jobs.tick({ budgetMs: 5_000 });
      expect(report).toMatchObject({ claimed: 3, succeeded: 3 });
      expect(await queueRow(jobs, locked)).toMatchObject({ status: "queued", attempt: 0 });
    } finally {
      await holder.query("ROLLBACK");
      holder.release();
    }
  });

  it("spreads retries with random jitter: half of the delay fixed, half random", async () => {
    const flaky = defineJob({ name: "jittery", schema: z.object({ n: z.number() }), backoff: { baseMs: 60_000 }, handler: () => { throw new Error("again"); } });
    // Real randomness here (the harness fixes it at 0.5 elsewhere).
    const setup = await h.isolated([flaky]);
    const jobs = createJobs({ db: h.main, jobs: [flaky], settings: { tablePrefix: setup.settings.tablePrefix, leaseMarginMs: 1_000 }, logger: jsonLogger("error", () => {}) });
    await jobs.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: "jittery" as const, payload: { n } })));
    const before = Date.now();
    expect(await jobs.tick({ budgetMs: 10_000, concurrency: 20 })).toMatchObject({ retried: 20 });
    const rows = await h.rows<{ delay: number }>(`SELECT (extract(epoch FROM run_at) * 1000)::float8 - $1 AS delay FROM ${jobs.tables.queue}`, [before]);
    const delays = rows.map((r) => r.delay);
    // Equal jitter on a 60 s first delay: every retry between 30 s and 60 s, and not all the same.
    for (const d of delays) {
      expect(d).toBeGreaterThan(30_000 - 1_000);
      expect(d).toBeLessThan(60_000 + 1_000);
    }
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(5_000);
    expect(new Set(delays.map((d) => Math.round(d / 100))).size).toBeGreaterThan(10);
  });

  it("stops claiming at the claim cutoff: a run is never started only to be requeued", async () => {
    const step = defineJob({ name: "step-600", schema: z.object({ n: z.number() }), handler: () => sleep(600) });
    const jobs = await h.isolated([step]);
    await jobs.enqueueMany(Array.from({ length: 10 }, (_, n) => ({ job: "step-600" as const, payload: { n } })));
    // One at a time, 600 ms each, claims at about 0, 600 and 1200 ms; at 1800 ms the cutoff (1500) has passed.
    // Without the cutoff it would claim at 1800 and 2400 and requeue the last one at the 3000 ms deadline.
    const report = await jobs.tick({ budgetMs: 3_000, claimCutoffMs: 1_500, concurrency: 1 });
    expect(report).toMatchObject({ claimed: 3, succeeded: 3, requeued: 0 });
    expect(report.durationMs).toBeLessThan(3_000);
  });

  it("writes structured JSON log lines", async () => {
    const lines: string[] = [];
    const logged = defineJob({ name: "logged", schema: z.object({}), handler: (_p, ctx) => ctx.log("info", "hello from the handler", { step: 1 }) });
    const jobs = createJobs({ db: h.main, jobs: [logged], logger: jsonLogger("info", (l) => lines.push(l)) });
    const { id } = await jobs.enqueue("logged", {}, { correlationId: "c-9" });
    await jobs.tick({ budgetMs: 10_000 });
    const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(events.find((e) => e.msg === "hello from the handler")).toMatchObject({ level: "info", jobId: id, jobName: "logged", attempt: 1, correlationId: "c-9", step: 1 });
    expect(events.find((e) => e.msg === "job succeeded")).toMatchObject({ jobId: id, jobName: "logged", attempt: 1, correlationId: "c-9", outcome: "succeeded", durationMs: expect.any(Number) });
  });
});
