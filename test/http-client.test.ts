import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient, JobsApiError } from "../src/client/client.js";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, defineSchedule, PermanentJobError, silentLogger } from "../src/index.js";
import { API_TOKENS, CRON_SECRET, NEW_TOKEN, serveOnLoopback } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("http_client");

const sendEmail = defineJob({ name: "send-email", schema: z.object({ to: z.string().email(), cc: z.array(z.string()).default([]) }), handler: () => {} });
const resize = defineJob({ name: "resize", schema: z.object({ url: z.string().url(), width: z.number().int() }), handler: () => {} });
const broken = defineJob({ name: "broken", schema: z.object({ n: z.number() }), handler: () => { throw new PermanentJobError("nope"); } });
const jobList = [sendEmail, resize, broken] as const;

const jobs = createJobs({
  db: h.main,
  jobs: jobList,
  logger: silentLogger,
  schedules: [defineSchedule({ name: "daily-resize", cron: "0 3 * * *", job: "resize", payload: { url: "https://x.test/a.png", width: 10 } })],
});
const server = await serveOnLoopback(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET } }));
afterAll(() => server.close());

const client = createClient<typeof jobList>({ baseUrl: `${server.url}/`, token: NEW_TOKEN });

describe("typed client against the app on a real socket", () => {
  it("enqueues with typed payloads, dedupes on a key, and reads the job back", async () => {
    const a = await client.enqueue("send-email", { to: "a@b.co" }, { idempotencyKey: "welcome-1", priority: 2 });
    expect(a).toEqual({ id: expect.any(String), deduplicated: false });
    expect(await client.enqueue("send-email", { to: "other@b.co" }, { idempotencyKey: "welcome-1" })).toEqual({ id: a.id, deduplicated: true });
    const job = await client.get(a.id);
    expect(job).toMatchObject({ id: a.id, job: "send-email", status: "queued", priority: 2, payload: { to: "a@b.co" } });
    expect(await client.get(crypto.randomUUID())).toBeNull();
    // Ids a URL would not keep as a segment (get("") would read the job list) name nothing.
    for (const odd of ["", ".", ".."]) {
      expect(await client.get(odd)).toBeNull();
      expect(await client.deadLetters.get(odd)).toBeNull();
      expect(await client.runs.get(odd)).toBeNull();
      await expect(client.cancel(odd)).rejects.toMatchObject({ status: 404, code: "not_found" });
    }
    // Nor do ids that would make another route's path (GET /api/dead-letters/replay answered 405).
    expect(await client.deadLetters.get("replay")).toBeNull();
    expect(await client.deadLetters.get("discard")).toBeNull();
    await expect(client.deadLetters.discard("discard")).rejects.toMatchObject({ status: 404, code: "not_found" });
    const page = await client.list({ job: "send-email", limit: 10 });
    expect(page.items.map((j) => j.id)).toEqual([a.id]);
    // List rows carry a preview of the payload and its size; getJob has the payload.
    expect(page.items[0]).toMatchObject({ payloadPreview: '{"to": "a@b.co"}', payloadBytes: 16, payloadTruncated: false });
    // @ts-expect-error: not on list rows
    expect(page.items[0]!.payload).toBeUndefined();

    // The compiler refuses unknown names and wrong payloads:
    // @ts-expect-error: no such job
    const unknown = client.enqueue("send-sms", { to: "a@b.co" }).catch((e: unknown) => e);
    // @ts-expect-error: width must be a number
    const wrong = client.enqueue("resize", { url: "https://x.test/a.png", width: "10" }).catch((e: unknown) => e);
    // ...and so does the server, for callers that get past it.
    expect(await unknown).toMatchObject({ name: "JobsApiError", status: 404, code: "unknown_job" });
    const err = await wrong;
    expect(err).toBeInstanceOf(JobsApiError);
    expect(err).toMatchObject({ status: 422, code: "invalid_payload", details: { issues: [{ path: ["width"] }] } });
  });

  it("enqueues a batch, and a bad item names its index", async () => {
    const items = await client.enqueueMany([
      { job: "resize", payload: { url: "https://x.test/b.png", width: 5 }, delayMs: 60_000 },
      { job: "send-email", payload: { to: "c@d.co", cc: ["e@f.co"] } },
    ]);
    expect(items).toHaveLength(2);
    const e = await client.enqueueMany([{ job: "send-email", payload: { to: "c@d.co" } }, { job: "send-email", payload: { to: "nope" } }]).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: "invalid_payload", details: { index: 1 } });
    await client.cancel(items[0]!.id);
    // The history records the cancel: reading the job says so, and waiting for it gives up at once.
    expect(await client.get(items[0]!.id)).toMatchObject({ status: "cancelled", attempt: 0, attempts: [{ outcome: "cancelled" }] });
    expect(await client.waitForResult(items[0]!.id).catch((x: unknown) => x)).toMatchObject({ name: "JobsWaitError", code: "cancelled" });
    expect(await client.cancel(items[0]!.id).catch((x: unknown) => x)).toMatchObject({ status: 404, code: "not_found" });
  });

  it("lists, replays (also with an edited payload) and discards dead letters", async () => {
    const { id } = await client.enqueue("broken", { n: 1 });
    const second = await client.enqueue("broken", { n: 2 });
    const third = await client.enqueue("broken", { n: 3 });
    await jobs.tick({ budgetMs: 5_000 });
    const page = await client.deadLetters.list({ job: "broken" });
    expect(page.items.map((d) => d.id).sort()).toEqual([id, second.id, third.id].sort());
    expect(await client.deadLetters.get(id)).toMatchObject({ reason: "permanent", payload: { n: 1 } });
    expect(await client.deadLetters.replay(id, { payload: { n: 10 } })).toEqual({ id, replayed: true });
    expect((await client.get(id))?.payload).toEqual({ n: 10 });
    expect(await client.deadLetters.replay(id).catch((x: unknown) => x)).toMatchObject({ code: "not_found" });
    const bulk = await client.deadLetters.replayMany({ ids: [second.id] });
    expect(bulk.replayed).toEqual([second.id]);
    await client.deadLetters.discard(third.id);
    expect(await client.deadLetters.get(third.id)).toBeNull();
  });

  it("reads stats, health and schedules, and runs a schedule now", async () => {
    const stats = await client.stats();
    expect(stats.queue.length).toBeGreaterThan(0);
    expect(await client.health()).toMatchObject({ ok: true });
    const [daily] = (await client.schedules.list({ next: 2 })).items;
    expect(daily).toMatchObject({ name: "daily-resize", job: "resize", paused: false });
    expect(daily!.nextRuns).toHaveLength(2);
    expect(await client.schedules.pause("daily-resize")).toMatchObject({ paused: true });
    expect(await client.schedules.resume("daily-resize")).toMatchObject({ paused: false });
    const run = await client.schedules.run("daily-resize");
    expect((await client.get(run.id))?.payload).toEqual({ url: "https://x.test/a.png", width: 10 });
    // A retried call with a key returns the job the first one queued.
    const keyed = await client.schedules.run("daily-resize", { idempotencyKey: "retry-7" });
    expect(await client.schedules.run("daily-resize", { idempotencyKey: "retry-7" })).toEqual({ id: keyed.id, deduplicated: true });
    expect(keyed).toEqual({ id: expect.any(String), deduplicated: false });
  });

  it("surfaces auth failures as JobsApiError 401", async () => {
    const bad = createClient<typeof jobList>({ baseUrl: server.url, token: "wrong-token" });
    expect(await bad.stats().catch((x: unknown) => x)).toMatchObject({ status: 401, code: "unauthorized" });
  });
});

describe("one route table", () => {
  it("the client calls every route of the table but the tick's and the document's, each as the table says", async () => {
    const seen = new Set<string>();
    const recording = createClient<typeof jobList>({
      baseUrl: "http://table.test",
      token: "t",
      fetch: async (req) => {
        const path = new URL(req.url).pathname.replace(id, ":id").replace("/runs/7", "/runs/:id").replace("/schedules/s/", "/schedules/:name/");
        seen.add(`${req.method} ${path}`);
        return new Response(JSON.stringify({ items: [{ id: "x", deduplicated: false }], id: "x" }), { status: 200 });
      },
    });
    const id = crypto.randomUUID();
    await recording.enqueue("resize", { url: "https://x.test/a.png", width: 1 });
    await recording.enqueueMany([{ job: "resize", payload: { url: "https://x.test/a.png", width: 1 } }]);
    await recording.get(id);
    await recording.list();
    await recording.cancel(id);
    await recording.run(id);
    await recording.runs.list();
    await recording.runs.get("7");
    await recording.runs.rerun("7");
    await recording.deadLetters.list();
    await recording.deadLetters.get(id);
    await recording.deadLetters.replay(id);
    await recording.deadLetters.replayMany({ ids: [id] });
    await recording.deadLetters.discard(id);
    await recording.deadLetters.discardMany([id]);
    await recording.schedules.list();
    await recording.schedules.pause("s");
    await recording.schedules.resume("s");
    await recording.schedules.run("s");
    await recording.stats();
    await recording.health();
    const { ROUTES } = await import("../src/http/route-table.js");
    const expected = Object.entries(ROUTES)
      .filter(([name]) => !["tick", "tick.get", "openapi"].includes(name))
      .map(([, r]) => `${r.method} ${r.path}`);
    expect([...seen].sort()).toEqual([...new Set(expected)].sort());
  });

  it("the OpenAPI document has exactly the table's routes, and the app answers each path's other methods with 405", async () => {
    const { ROUTES } = await import("../src/http/route-table.js");
    const doc = (await (await fetch(`${server.url}/api/openapi.json`, { headers: { authorization: `Bearer ${NEW_TOKEN}` } })).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).filter((k) => ["get", "post", "delete"].includes(k)).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`));
    expect(documented.sort()).toEqual(Object.values(ROUTES).map((r) => `${r.method} ${r.path}`).sort());
    const put = await fetch(`${server.url}/api/dead-letters/discard`, { method: "PUT", headers: { authorization: `Bearer ${NEW_TOKEN}` } });
    expect(put.status).toBe(405);
    expect(put.headers.get("allow")).toBe("POST");
  });
});

describe("pgtick/client", () => {
  it("bundles to the client, the route table and the JSON limits alone: no pg, Neon, Hono, zod or store code", async () => {
    const { build } = await import("esbuild");
    // "pgtick-source": the entry point's sources, as everywhere in this repository (an app's bundler gets dist/).
    const out = await build({
      stdin: { contents: 'export * from "pgtick/client";', resolveDir: process.cwd(), loader: "ts" },
      bundle: true, write: false, metafile: true, format: "esm", platform: "neutral", conditions: ["pgtick-source"], logLevel: "silent",
    });
    const inputs = Object.keys(out.metafile.inputs).filter((f) => f !== "<stdin>").sort();
    expect(inputs).toEqual(["src/client/client.ts", "src/client/index.ts", "src/client/sendable.ts", "src/client/wait.ts", "src/http/route-table.ts", "src/json-limits.ts"]);
    const code = out.outputFiles[0]!.text;
    for (const marker of ["@neondatabase", "from \"pg\"", "hono", "zod", "SELECT ", "jsonb"]) expect(code).not.toContain(marker);
  });
});
