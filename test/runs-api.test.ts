import { afterAll, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { createClient, JobsWaitError } from "../src/client/index.js";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, PermanentJobError, silentLogger } from "../src/index.js";
import { API_TOKENS, caller, CRON_SECRET, NEW_TOKEN, serveOnLoopback } from "./http-support.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("runs_api");

const invoice = defineJob({
  name: "invoice",
  schema: z.object({ order: z.string(), fail: z.number().default(0) }),
  output: z.object({ total: z.number(), currency: z.literal("EUR") }),
  maxAttempts: 3,
  // A retry a minute later, past the tick: the tests see it queued, then make it due.
  backoff: { baseMs: 60_000 },
  handler: (p, ctx) => {
    ctx.log("info", "pricing", { order: p.order });
    if (ctx.attempt <= p.fail) throw new Error(`attempt ${ctx.attempt} failed`);
    return { total: 99.5, currency: "EUR" as const };
  },
});
const doomed = defineJob({ name: "doomed", schema: z.object({}), handler: () => { throw new PermanentJobError("card declined"); } });
const plain = defineJob({ name: "plain", schema: z.object({ n: z.number() }), handler: (p) => p.n });
const jobList = [invoice, doomed, plain] as const;

const jobs = createJobs({ db: h.main, jobs: jobList, logger: silentLogger, random: () => 0.5 });
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET } });
const call = caller(app);
const server = await serveOnLoopback(app);
afterAll(() => server.close());
const client = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN });
const tick = () => jobs.tick({ budgetMs: 5_000 });

describe("finished jobs and their runs", () => {
  it("GET /api/jobs/:id answers a succeeded job with its output, finishedAt and attempts", async () => {
    const { id } = await jobs.enqueue("invoice", { order: "A-1", fail: 1 }, { correlationId: "checkout-1" });
    await tick();
    const retrying = await call("GET", `/api/jobs/${id}`);
    expect(retrying.body).toMatchObject({ status: "queued", attempt: 1, attempts: [{ attempt: 1, outcome: "retried", error: "attempt 1 failed" }] });
    await h.db.query(`UPDATE jobs_queue SET run_at = now() WHERE id = $1`, [id]);
    await tick();
    const done = await call("GET", `/api/jobs/${id}`);
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      id, job: "invoice", status: "succeeded", payload: { order: "A-1", fail: 1 }, output: { total: 99.5, currency: "EUR" },
      outputTruncated: false, attempt: 2, maxAttempts: 3, correlationId: "checkout-1", replays: 0,
      attempts: [{ attempt: 1, outcome: "retried" }, { attempt: 2, outcome: "succeeded", error: null }],
    });
    expect(Date.parse(done.body.finishedAt)).toBeGreaterThan(Date.parse(done.body.createdAt) - 1);
    expect(await jobs.get(id)).toMatchObject({ status: "succeeded", output: { total: 99.5, currency: "EUR" } });
  });

  it("answers a dead job from its dead letter, and from the history once the dead letter is discarded; a replay is counted", async () => {
    const { id } = await jobs.enqueue("doomed", {});
    await tick();
    expect((await call("GET", `/api/jobs/${id}`)).body).toMatchObject({ status: "dead", reason: "permanent", replays: 0, attempts: [{ outcome: "dead_lettered" }] });
    const [before] = await h.rows<{ created_at: string }>(`SELECT created_at FROM jobs_dead_letters WHERE id = $1`, [id]);
    await jobs.deadLetters.replay(id);
    const replayed = await jobs.get(id);
    expect(replayed).toMatchObject({ status: "queued", replays: 1 });
    // It keeps the time it was first enqueued (to the millisecond the driver reads).
    expect(replayed!.createdAt.slice(0, 23)).toBe(new Date(before!.created_at).toISOString().slice(0, 23));
    await tick();
    expect(await jobs.deadLetters.get(id)).toMatchObject({ replays: 1 });
    await jobs.deadLetters.discard(id);
    expect((await call("GET", `/api/jobs/${id}`)).body).toMatchObject({
      status: "dead", replays: 1, lastError: "PermanentJobError: card declined",
      attempts: [{ outcome: "dead_lettered", attempt: 1 }, { outcome: "dead_lettered", attempt: 1 }],
    });
  });

  it("lists runs newest first, by job, outcome, job id, correlation id, idempotency key and time, paging without repeats", async () => {
    const t0 = new Date(Date.now() - 1_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await jobs.enqueue("plain", { n: i }, { correlationId: `batch-7`, idempotencyKey: `p-${i}` })).id);
    await tick();
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call("GET", `/api/runs?correlationId=batch-7&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((r: { jobId: string }) => r.jobId));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen)).toEqual(new Set(ids));
    const byJob = await jobs.runs.list({ job: "plain", outcome: "succeeded" });
    expect(byJob.items.map((r) => Number(r.id))).toEqual([...byJob.items.map((r) => Number(r.id))].sort((a, b) => b - a));
    expect((await jobs.runs.list({ job: "plain" })).items).toHaveLength(7);
    expect((await jobs.runs.list({ idempotencyKey: "p-3" })).items).toMatchObject([{ jobId: ids[3] }]);
    expect((await jobs.runs.list({ jobId: ids[5]! })).items).toMatchObject([{ jobId: ids[5], outcome: "succeeded" }]);
    expect((await jobs.runs.list({ job: "plain", since: t0 })).items).toHaveLength(7);
    expect((await jobs.runs.list({ job: "plain", until: t0 })).items).toHaveLength(0);
    const one = await call("GET", `/api/runs/${byJob.items[0]!.id}`);
    expect(one.body).toMatchObject({ job: "plain", outcome: "succeeded", output: expect.any(Number), logs: [], stack: null });
  });

  it("refuses bad filters with invalid_options and unknown runs with not_found", async () => {
    for (const q of ["outcome=won", "since=yesterday", "until=2026-13-45", "since=2024-02-30", "since=0000-01-01", "since=1", "jobId=12", "cursor=abc", "limit=0", "color=red"]) {
      const r = await call("GET", `/api/runs?${q}`);
      expect({ q, status: r.status, code: r.body.error.code }).toEqual({ q, status: 422, code: "invalid_options" });
    }
    for (const id of ["999999999", "abc", "-1", "99999999999999999999"]) {
      expect((await call("GET", `/api/runs/${id}`)).status).toBe(404);
      expect((await call("POST", `/api/runs/${id}/rerun`)).status).toBe(404);
    }
  });

  it("runs a run again: a new job with its payload, correlation id, priority and maxAttempts (the last two were the defaults)", async () => {
    const { id } = await jobs.enqueue("plain", { n: 77 }, { correlationId: "again-1", priority: 10, maxAttempts: 3 });
    await tick();
    const [run] = (await jobs.runs.list({ jobId: id })).items;
    const r = await call("POST", `/api/runs/${run!.id}/rerun`);
    expect(r.status).toBe(201);
    expect(r.body.id).not.toBe(id);
    expect(await jobs.get(r.body.id)).toMatchObject({ job: "plain", status: "queued", payload: { n: 77 }, correlationId: "again-1", priority: 10, maxAttempts: 3 });
  });

  it("runs a run again once per idempotency key (header, body or client), so a retried request queues one job", async () => {
    const { id } = await jobs.enqueue("plain", { n: 78 });
    await tick();
    const [run] = (await jobs.runs.list({ jobId: id })).items;
    const path = `/api/runs/${run!.id}/rerun`;
    const first = await call("POST", path, { headers: { "idempotency-key": "rr-1" } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ runId: run!.id, deduplicated: false });
    const again = await call("POST", path, { json: { idempotencyKey: "rr-1" } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, runId: run!.id, deduplicated: true });
    const viaClient = await client.runs.rerun(run!.id, { idempotencyKey: "rr-1" });
    expect(viaClient).toEqual({ id: first.body.id, runId: run!.id, deduplicated: true });
    const other = await client.runs.rerun(run!.id, { idempotencyKey: "rr-2" });
    expect(other.id).not.toBe(first.body.id);
    // A body that is not the key is refused and queues nothing; so are a header and body that differ.
    const queued = async () => (await jobs.list({ job: "plain" })).items.length;
    const before = await queued();
    const bads: Array<{ json?: unknown; raw?: string; headers?: Record<string, string> }> = [{ json: { idempotencyKey: 5 } }, { json: { key: "x" } }, { raw: "null", headers: { "content-type": "application/json" } }, { json: { idempotencyKey: "a" }, headers: { "idempotency-key": "b" } }];
    for (const bad of bads) {
      const r = await call("POST", path, bad);
      expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 422, code: "invalid_options" });
    }
    // One job, not a batch: the error names no batch index.
    const long = await call("POST", path, { json: { idempotencyKey: "k".repeat(256) } });
    expect(long.body.error).toMatchObject({ code: "invalid_options", details: { field: "idempotencyKey" } });
    expect(long.body.error.details).not.toHaveProperty("index");
    expect(await queued()).toBe(before);
  });
});

describe("client.waitForResult", () => {
  it("returns the output, typed by the job's output schema, once a tick has run it", async () => {
    const { id } = await client.enqueue("invoice", { order: "B-2" });
    const waiting = client.waitForResult(id, { timeoutMs: 10_000, intervalMs: 50 });
    await sleep(200);
    await tick();
    const output = await waiting;
    expectTypeOf(output).toEqualTypeOf<{ total: number; currency: "EUR" }>();
    expect(output).toEqual({ total: 99.5, currency: "EUR" });
    const other = await client.enqueue("plain", { n: 3 });
    // Only the type is checked: calling it would leave a poll running after the test.
    const waitPlain = () => client.waitForResult(other.id);
    expectTypeOf(waitPlain).returns.resolves.toBeUnknown();
  });

  it("rejects with dead, timeout and not_found", async () => {
    const { id } = await client.enqueue("doomed", {});
    const pending = await client.waitForResult(id, { timeoutMs: 200, intervalMs: 50 }).catch((e: unknown) => e);
    expect(pending).toBeInstanceOf(JobsWaitError);
    expect(pending).toMatchObject({ code: "timeout", job: { status: "queued" } });
    await tick();
    await expect(client.waitForResult(id, { timeoutMs: 1_000 })).rejects.toMatchObject({ code: "dead", message: expect.stringContaining("card declined") });
    await expect(client.waitForResult(crypto.randomUUID())).rejects.toMatchObject({ code: "not_found" });
  });
});
