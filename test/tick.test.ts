// A tick's outcomes: runs, retries with jittered backoff, dead letters, timeouts, the budget and its lease; its log lines.
import { tickLimits } from "../src/tick/limits.js";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, jsonLogger, PermanentJobError } from "../src/index.js";
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
    // The retry is due at once: the same tick runs it.
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 2, retried: 1, deadLettered: 1 });
    expect(await queueRow(jobs, id)).toBeUndefined();
    expect(await deadRow(jobs, id)).toMatchObject({ job_name: "always-fails", payload: { x: 1 }, attempts: 2, reason: "exhausted", last_error: "TypeError: bad" });
  });

  it("gives back the attempt of a run the platform refused (a Worker past its subrequests), due after the minute: it was the job's failure, and a dead letter", async () => {
    const fetching = defineJob({ name: "fetching", schema: z.object({}), maxAttempts: 1, handler: () => { throw new Error("Too many subrequests."); } });
    const jobs = await h.isolated([fetching]);
    await jobs.enqueue("fetching", {});
    // Off Workers the same words are the handler's own failure (else it would go back for ever).
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1 });
    // As workerd says it is.
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    try {
      const fresh = (await jobs.enqueue("fetching", {})).id;
      expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1, deadLettered: 0 });
      const [row] = await h.rows<{ status: string; attempt: number; due_in: number }>(
        `SELECT status, attempt, extract(epoch FROM run_at - now())::int AS due_in FROM ${jobs.tables.queue} WHERE id = $1`, [fresh]);
      expect(row).toMatchObject({ status: "queued", attempt: 0 });
      expect(row!.due_in).toBeGreaterThan(50);
      // Refused again in a row, it counts: a job that alone needs more than an invocation allows ends as a failing job does.
      await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [fresh]);
      expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1 });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("claims no more once the platform refused a run (the whole due queue went back a minute), and records the refused run under its own attempt", async () => {
    const fetching = defineJob({ name: "fetching-many", schema: z.object({ n: z.number() }), handler: () => { throw new Error("Too many subrequests."); } });
    const jobs = await h.isolated([fetching]);
    await jobs.enqueueMany(Array.from({ length: 20 }, (_, n) => ({ job: "fetching-many" as const, payload: { n } })));
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    try {
      const report = await jobs.tick({ budgetMs: 10_000, concurrency: 5 });
      expect(report.claimed).toBeLessThanOrEqual(5);
      expect(report.retried).toBe(report.claimed);
    } finally {
      vi.unstubAllGlobals();
    }
    const [due] = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.queue} WHERE run_at <= now() AND attempt = 0`);
    expect(due!.n).toBeGreaterThanOrEqual(15);
    const attempts = await h.rows<{ attempt: number }>(`SELECT DISTINCT attempt FROM ${jobs.tables.runs} WHERE job_name = 'fetching-many'`);
    expect(attempts).toEqual([{ attempt: 1 }]);
  });

  it("keeps a PermanentJobError permanent, whatever its words (it was taken for a platform refusal, and went back for ever)", async () => {
    const permanent = defineJob({ name: "quota", schema: z.object({}), handler: () => { throw new PermanentJobError("Too many subrequests for this account"); } });
    const jobs = await h.isolated([permanent]);
    await jobs.enqueue("quota", {});
    vi.stubGlobal("navigator", { userAgent: "Cloudflare-Workers" });
    try {
      expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1, retried: 0 });
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it("dead-letters a PermanentJobError at once, with no retry", async () => {
    const permanent = defineJob({ name: "permanent", schema: z.object({}), maxAttempts: 5, handler: () => { throw new PermanentJobError("account deleted"); } });
    const jobs = await h.isolated([permanent]);
    const { id } = await jobs.enqueue("permanent", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1, retried: 0 });
    expect(await deadRow(jobs, id)).toMatchObject({ attempts: 1, reason: "permanent", last_error: "PermanentJobError: account deleted" });
  });

  it("dead-letters a stored payload that no longer parses under the current schema, once it is older than the grace of a rolling deploy", async () => {
    const v1 = defineJob({ name: "evolving", schema: z.object({ email: z.string() }), handler: () => {} });
    const v2 = defineJob({ name: "evolving", schema: z.object({ address: z.string() }), handler: () => {} });
    const old = await h.isolated([v1]);
    const { id } = await old.enqueue("evolving", { email: "a@b.c" });
    const jobs = h.make([v2], { tablePrefix: old.settings.tablePrefix });
    await h.db.query(`UPDATE ${jobs.tables.queue} SET created_at = now() - interval '16 minutes' WHERE id = $1`, [id]);
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    const dead = await deadRow(jobs, id);
    expect(dead).toMatchObject({ reason: "invalid_payload", attempts: 1 });
    expect(dead!.last_error).toContain("address");
  });

  it("retries a fresh job an older release's schema refuses (a rolling deploy): the newer release's tick then runs it", async () => {
    let ran = 0;
    const older = defineJob({ name: "bill", schema: z.object({ plan: z.enum(["free", "pro"]) }), maxAttempts: 1, handler: () => {} });
    const newer = defineJob({ name: "bill", schema: z.object({ plan: z.enum(["free", "pro", "team"]) }), maxAttempts: 1, handler: () => void ran++ });
    const jobs = await h.isolated([newer]);
    const { id } = await jobs.enqueue("bill", { plan: "team" });
    const oldTick = h.make([older], { tablePrefix: jobs.settings.tablePrefix });
    // Before, a dead letter (invalid_payload) at the older tick's first claim.
    expect(await oldTick.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1, deadLettered: 0 });
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [id]);
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(ran).toBe(1);
  });

  it("does not claim again, in the same tick, a fresh job its schema refused: a newer release's tick is the one to run it", async () => {
    const older = defineJob({ name: "bill-again", schema: z.object({ plan: z.enum(["free", "pro"]) }), handler: () => {} });
    const newer = defineJob({ name: "bill-again", schema: z.object({ plan: z.enum(["free", "pro", "team"]) }), handler: () => {} });
    const jobs = await h.isolated([newer]);
    const { id } = await jobs.enqueue("bill-again", { plan: "team" });
    // A long job keeps the older tick going past the retry's backoff.
    const keep = defineJob({ name: "keep-going", schema: z.object({}), handler: () => new Promise<void>((r) => setTimeout(r, 4_000)) });
    const busy = h.make([older, keep], { tablePrefix: jobs.settings.tablePrefix, claimIntervalMs: 50 });
    await busy.enqueue("keep-going", {});
    await busy.tick({ budgetMs: 8_000 });
    const [row] = await h.rows<{ attempt: number }>(`SELECT attempt FROM ${jobs.tables.queue} WHERE id = $1`, [id]);
    // Before: claimed again by the same tick after its backoff (attempt 2, then more), each claim an attempt.
    expect(row).toMatchObject({ attempt: 1 });
  }, 20_000);

  it("retries a job whose schema throws while parsing, as a handler that throws, and keeps going", async () => {
    const lenient = defineJob({ name: "json-in-string", schema: z.object({ s: z.string() }), maxAttempts: 2, handler: () => {} });
    const strict = defineJob({
      name: "json-in-string",
      schema: z.object({ s: z.string().transform((s) => JSON.parse(s) as unknown) }),
      maxAttempts: 2,
      handler: () => {},
    });
    const old = await h.isolated([lenient]);
    const { id } = await old.enqueue("json-in-string", { s: "{not json" });
    const jobs = h.make([strict], { tablePrefix: old.settings.tablePrefix });
    // Before, a dead letter (invalid_payload) at once: a transform whose lookup failed in passing was never tried again.
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1, deadLettered: 0 });
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [id]);
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, deadLettered: 1 });
    const dead = await deadRow(jobs, id);
    expect(dead).toMatchObject({ reason: "exhausted", attempts: 2 });
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
    // Out of attempts, but enqueued moments ago: a deployment that does not know it yet does not end it.
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [id]);
    expect(await other.tick({ budgetMs: 10_000 })).toMatchObject({ retried: 1, deadLettered: 0 });
    // Enqueued longer ago than the grace: it is dead-lettered, naming the handler.
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now(), created_at = now() - interval '16 minutes' WHERE id = $1`, [id]);
    expect(await other.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    expect(await deadRow(jobs, id)).toMatchObject({ reason: "no_handler", last_error: 'no handler for job "orphan" in this deployment' });
  });

  it("keeps the grace of a job whose handler is missing by the database's clock: a deployment 16 minutes ahead does not end a fresh job", async () => {
    const orphan = defineJob({ name: "orphan-skewed", schema: z.object({}), maxAttempts: 1, handler: () => {} });
    const jobs = await h.isolated([orphan]);
    const { id } = await jobs.enqueue("orphan-skewed", {});
    const other = h.make([], { tablePrefix: jobs.settings.tablePrefix });
    const real = Date.now.bind(Date);
    const ahead = vi.spyOn(Date, "now").mockImplementation(() => real() + 16 * 60_000);
    try {
      expect(await other.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1, deadLettered: 0 });
    } finally {
      ahead.mockRestore();
    }
    expect(await queueRow(jobs, id)).toMatchObject({ status: "queued" });
  });

  it("lets a job of one attempt that an older deployment claimed first still run where its handler is (a rolling deploy)", async () => {
    let ran = 0;
    const once = defineJob({ name: "fresh-once", schema: z.object({}), maxAttempts: 1, handler: () => void ran++ });
    const jobs = await h.isolated([once]);
    const { id } = await jobs.enqueue("fresh-once", {});
    const older = h.make([], { tablePrefix: jobs.settings.tablePrefix });
    // Claimed often before (the older deployment kept meeting it): the backoff at its 12th attempt is hours.
    await h.db.query(`UPDATE ${jobs.tables.queue} SET attempt = 11 WHERE id = $1`, [id]);
    expect(await older.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, retried: 1, deadLettered: 0 });
    const waited = await queueRow(jobs, id);
    // Retried within a minute, not after the job's own backoff.
    expect(new Date(waited!.run_at as string).getTime() - Date.now()).toBeLessThanOrEqual(60_000);
    await h.db.query(`UPDATE ${jobs.tables.queue} SET run_at = now() WHERE id = $1`, [id]);
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    expect(ran).toBe(1);
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

  it("requeues a run that outlives the budget before returning; its late result is dropped, not sent (the fence itself: race.test.ts)", async () => {
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
    // Its own line says which job, and how long it ran before the deadline took it.
    const line = jobs.logs.find((e) => e.msg === "job requeued at the deadline");
    expect(line).toMatchObject({ jobId: id, jobName: "long-run", outcome: "requeued", durationMs: expect.any(Number) });
    expect(line!.durationMs as number).toBeGreaterThanOrEqual(250);
    // Claimable at once by another tick, which now owns it.
    expect(await queueRow(jobs, id)).toMatchObject({ status: "queued", lease_owner: null, attempt: 1, last_error: expect.stringContaining("deadline") });
    const [reclaimed] = await h.rows<{ lease_owner: string }>(
      `UPDATE ${jobs.tables.queue} SET status = 'running', lease_owner = gen_random_uuid(), attempt = attempt + 1 WHERE id = $1 RETURNING lease_owner`, [id]);
    // The first run finishes late: the final statement requeued it, so its result is dropped without a statement.
    finish();
    await expect.poll(() => jobs.logs.some((e) => e.msg === "late result dropped: the run was requeued at the tick's end" && e.jobId === id && e.late === true)).toBe(true);
    expect(completions).toBe(1);
    expect(await queueRow(jobs, id)).toMatchObject({ status: "running", lease_owner: reclaimed!.lease_owner, attempt: 2 });
  });

  it("dead-letters a job that never fits in a budget once its attempts are spent", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const never = defineJob({ name: "never-fits", schema: z.object({}), maxAttempts: 2, handler: () => released });
    const jobs = await h.isolated([never]);
    const { id } = await jobs.enqueue("never-fits", {});
    expect(await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 })).toMatchObject({ requeued: 1 });
    expect(await jobs.tick({ budgetMs: 300, claimCutoffMs: 100 })).toMatchObject({ requeued: 0, deadLettered: 1, requeuedIds: [] });
    expect(jobs.logs.find((e) => e.msg === "job dead-lettered")).toMatchObject({
      jobId: id, jobName: "never-fits", reason: "deadline", durationMs: expect.any(Number), error: "the tick's deadline came before the run finished, at its last attempt",
    });
    // Its handlers return late: each result is dropped, said as what the tick's end made of its run.
    release();
    await expect.poll(() => jobs.logs.filter((e) => e.msg.startsWith("late result dropped")).map((e) => e.msg).sort()).toEqual([
      "late result dropped: the run was dead-lettered at the tick's end",
      "late result dropped: the run was requeued at the tick's end",
    ]);
    // Its error does not say "requeued": it was not.
    expect(await deadRow(jobs, id)).toMatchObject({ reason: "deadline", attempts: 2, last_error: "the tick's deadline came before the run finished, at its last attempt" });
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
    // At least budget + grace (5 s) + margin from the claim (minus the little time before it), never just JOBS_LEASE.
    expect(lease!.getTime() - started).toBeGreaterThan(120_000 + 5_000 + 7_000 - 2_000);
  });

  it("keeps a lease past the grace the tick may still spend before it aborts its runs (another tick reclaimed one still running)", async () => {
    let lease: Date | undefined;
    const probe = defineJob({
      name: "lease-grace",
      schema: z.object({}),
      handler: async (_p, ctx) => {
        const [row] = await h.rows<{ lease_expires_at: Date }>(`SELECT lease_expires_at FROM ${jobs.tables.queue} WHERE id = $1`, [ctx.jobId]);
        lease = row!.lease_expires_at;
      },
    });
    // A margin shorter than the grace: the tick waits up to half the grace on a statement at its deadline, then its final statement takes the rest.
    const jobs = await h.isolated([probe], { leaseMs: 0, leaseMarginMs: 1_000, graceMs: 8_000 });
    await jobs.enqueue("lease-grace", {});
    const started = Date.now();
    await jobs.tick({ budgetMs: 2_000 });
    expect(lease!.getTime() - started).toBeGreaterThan(2_000 + 8_000 + 1_000 - 1_500);
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

  it("refuses a handoff it was not given, naming it, and touches nothing (PostgreSQL's cast error before)", async () => {
    const ran: number[] = [];
    const job = defineJob({ name: "h", schema: z.object({}), handler: () => void ran.push(1) });
    const jobs = await h.isolated([job]);
    await jobs.enqueue("h", {});
    for (const handoff of [{ slot: 1, token: "abc" }, { slot: 1.5, token: crypto.randomUUID() }, { slot: 0, token: crypto.randomUUID() }, null]) {
      await expect(jobs.tick({ budgetMs: 2_000, handoff: handoff as never }), JSON.stringify(handoff)).rejects.toMatchObject({ code: "invalid_options", details: { field: "handoff" } });
    }
    expect(ran).toEqual([]);
    expect(await h.rows(`SELECT 1 FROM ${jobs.tables.queue} WHERE status = 'running'`)).toEqual([]);
    // A grace of a few milliseconds: the final statement had no time to requeue what ran, whose jobs stayed running.
    for (const graceMs of [1, 5, 99]) {
      await expect(jobs.tick({ budgetMs: 2_000, graceMs }), String(graceMs)).rejects.toMatchObject({ code: "invalid_options", details: { field: "graceMs" } });
    }
    // A NaN is named as such (it read "got null").
    await expect(jobs.tick({ budgetMs: 2_000, graceMs: Number.NaN })).rejects.toThrow(/got NaN$/);
    // Bounded as the concurrency setting is (a claim's LIMIT is a PostgreSQL integer): 3e9 was taken.
    for (const [field, value] of [["concurrency", 3_000_000_000], ["concurrency", 10_001]] as const) {
      await expect(jobs.tick({ budgetMs: 2_000, [field]: value }), `${field} ${value}`).rejects.toMatchObject({ code: "invalid_options", message: `tick option ${field} must be an integer from 1 to 10000, got ${value}`, details: { field } });
    }
    expect(ran).toEqual([]);
    // A batch size is clamped to the concurrency, as the setting's is: any positive integer is taken.
    expect(tickLimits(jobs.settings, { batchSize: 20_000, concurrency: 10 }).batchSize).toBe(10);
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
