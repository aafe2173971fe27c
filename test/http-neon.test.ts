// The HTTP API as an edge runtime runs it: a Neon serverless Pool opened per
// request (through the WebSocket proxy to the test server) and closed after it.
// Every API statement goes through the Neon driver here.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, PermanentJobError, silentLogger } from "../src/index.js";
import { API_TOKENS, caller } from "./http-support.js";
import { harness } from "./support/harness.js";
import { neonForFile, neonPool } from "./support/neon.js";

const h = await harness("http_neon");
const proxied = neonForFile(h.url);

const note = defineJob({ name: "note", schema: z.object({ text: z.string() }), handler: () => {} });
const dies = defineJob({ name: "dies", schema: z.object({ n: z.number() }), handler: () => { throw new PermanentJobError("no"); } });

let opened = 0;
let closed = 0;
const app = createApp({
  jobs: async () => {
    const pool = neonPool(h.url, proxied.proxy(), 2);
    opened++;
    return { jobs: createJobs({ db: pool, jobs: [note, dies], logger: silentLogger }), dispose: async () => { closed++; await pool.end(); } };
  },
  env: { JOBS_API_TOKEN: API_TOKENS },
});
const call = caller(app);

describe("the API over the Neon Pool, one pool per request", () => {
  it("enqueues, dedupes, lists, gets and cancels", async () => {
    const text = `Neon ' " \\ 日本語 🎉`;
    const a = await call("POST", "/api/jobs", { json: { job: "note", payload: { text }, delayMs: 60_000, idempotencyKey: text } });
    expect(a.status).toBe(201);
    const again = await call("POST", "/api/jobs", { json: { job: "note", payload: { text: "other" }, idempotencyKey: text } });
    expect(again).toMatchObject({ status: 200, body: { id: a.body.id, deduplicated: true } });
    const batch = await call("POST", "/api/jobs", { json: [{ job: "note", payload: { text: "1" }, delayMs: 60_000 }, { job: "note", payload: { text: 2 } }] });
    expect(batch.body.error).toMatchObject({ code: "invalid_payload", details: { index: 1 } });
    const list = await call("GET", "/api/jobs?job=note&limit=1");
    // List rows carry a preview of the payload (whole here, so it parses back), the detail route the payload.
    expect(list.body.items).toEqual([expect.objectContaining({ id: a.body.id, payloadTruncated: false, idempotencyKey: text, status: "queued" })]);
    expect(list.body.items[0]).not.toHaveProperty("payload");
    expect(JSON.parse(list.body.items[0].payloadPreview)).toEqual({ text });
    expect(list.body.nextCursor).toBeNull();
    const got = await call("GET", `/api/jobs/${a.body.id}`);
    expect(got.body.payload).toEqual({ text });
    expect(got.body.runAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect((await call("DELETE", `/api/jobs/${a.body.id}`)).body).toEqual({ id: a.body.id, cancelled: true });
    expect((await call("GET", `/api/jobs/${a.body.id}`)).body).toMatchObject({ status: "cancelled", payload: { text } });
  });

  it("replays (one, edited, bulk), discards, and reports stats", async () => {
    const jobs = createJobs({ db: h.main, jobs: [note, dies], logger: silentLogger });
    const made = await jobs.enqueueMany([1, 2, 3, 4].map((n) => ({ job: "dies" as const, payload: { n } })));
    await jobs.tick({ budgetMs: 5_000 });
    const [a, b, c, d] = made.map((m) => m.id);
    expect((await call("GET", "/api/dead-letters?job=dies")).body.items).toHaveLength(4);
    expect((await call("POST", `/api/dead-letters/${a}/replay`)).body).toEqual({ id: a, replayed: true });
    expect((await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: "x" } } })).body.error.code).toBe("invalid_payload");
    expect((await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: 20 } } })).status).toBe(200);
    const bulk = await call("POST", "/api/dead-letters/replay", { json: { ids: [c, a] } });
    expect(bulk.body).toEqual({ replayed: [c], skipped: [{ id: a, reason: "not_found" }], remaining: 0, nextCursor: null });
    expect((await call("DELETE", `/api/dead-letters/${d}`)).body).toEqual({ id: d, discarded: true });
    const stats = await call("GET", "/api/stats");
    expect(stats.body.queue).toEqual([{ job: "dies", status: "queued", count: 3, oldestWaitingMs: expect.any(Number) }]);
    expect(stats.body.deadLetters).toEqual([]);
    expect(stats.body.minutes).toEqual([expect.objectContaining({ job: "dies", deadLettered: 4 })]);
    // One pool per request that reached the database, each closed after it.
    expect(opened).toBe(14);
    expect(closed).toBe(opened);
  });
});
