// The HTTP API: stats, the tick route, the OpenAPI document, routing, and createApp's options.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { openApiDocument } from "../src/http/openapi.js";
import { zodPayloadSchemas } from "../src/http/payload-schemas.js";
import { type AnyJob, defineJob, JobsError } from "../src/index.js";
import { DEAD_REASONS } from "../src/terms.js";
import { ROUTES, type RouteSpec } from "../src/http/route-table.js";
import { API_TOKENS, caller, CRON_SECRET } from "./http-support.js";
import { expectError, httpFixture, sendEmail } from "./support/http-fixture.js";

const { h, jobs, call, count, reset, makeDead } = await httpFixture("http_routes");

describe("stats, tick, openapi, routing", () => {
  it("reports queue depth, oldest wait, dead letters and per-minute counts", async () => {
    await reset();
    await h.rows(`DELETE FROM jobs_metrics`);
    await makeDead([1]);
    await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, runAt: new Date(Date.now() - 60_000).toISOString() } });
    await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } });
    const r = await call("GET", "/api/stats");
    expect(r.status).toBe(200);
    expect(r.body.queue).toEqual([{ job: "send-email", status: "queued", count: 2, oldestWaitingMs: expect.any(Number) }]);
    expect(r.body.queue[0].oldestWaitingMs).toBeGreaterThanOrEqual(59_000);
    expect(r.body.oldestWaitingMs).toBe(r.body.queue[0].oldestWaitingMs);
    expect(r.body.deadLetters).toEqual([{ job: "fails", count: 1, lastDeadAt: expect.any(String) }]);
    expect(r.body.minutes).toEqual([expect.objectContaining({ job: "fails", deadLettered: 1, failed: 1 })]);
    expect(r.body.lastTickAt).toEqual(expect.any(String));
  });

  it("runs a tick on POST and GET with the cron secret and returns its report", async () => {
    await reset();
    await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } } });
    const r = await call("POST", "/api/tick", { token: CRON_SECRET });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ claimed: 1, succeeded: 1, requeuedIds: [] });
    expect(await count()).toBe(0);
  });

  it("describes payloads as the server checks them when no JSON Schema converter is given (the worker's default, to stay small)", () => {
    const registry = new Map([[sendEmail.name, sendEmail]]);
    const doc = openApiDocument(registry) as { components: { schemas: Record<string, { "x-job-name"?: string; properties?: object; description?: string }> } };
    const payload = Object.values(doc.components.schemas).find((s) => s["x-job-name"] === sendEmail.name)!;
    expect(payload.properties).toBeUndefined();
    expect(payload.description).toContain("checked by the server");
  });

  it("serves an OpenAPI document with each job's payload schema", async () => {
    const r = await call("GET", "/api/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toBe("3.1.0");
    expect(r.body.components.schemas["Payload.send-email"]).toMatchObject({
      type: "object",
      properties: { to: { type: "string", format: "email" } },
      required: ["to"],
      "x-job-name": "send-email",
    });
    expect(r.body.components.schemas["Payload.ns_echo_v1.x_y"]["x-job-name"]).toBe("ns:echo/v1.x_y");
    expect(r.body.components.schemas.Enqueue.oneOf.map((o: any) => o.properties.job.const)).toEqual(["send-email", "ns:echo/v1.x_y", "fails"]);
    for (const p of ["/api/jobs", "/api/jobs/{id}", "/api/dead-letters", "/api/dead-letters/replay", "/api/dead-letters/{id}", "/api/dead-letters/{id}/replay", "/api/schedules", "/api/schedules/{name}/run", "/api/stats", "/api/tick", "/api/health"]) {
      expect(r.body.paths).toHaveProperty([p]);
    }
    expectError(await call("GET", "/api/openapi.json", { token: null }), 401, "unauthorized");
  });

  it("resolves every $ref of the document, a recursive or named payload schema's too (they pointed at the document's root)", () => {
    type Tree = { name: string; children: Tree[] };
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
    const address = z.object({ street: z.string() }).meta({ id: "Address" });
    const registry = new Map<string, AnyJob>([
      ["tree", defineJob({ name: "tree", schema: z.object({ root: tree }), handler: () => {} })],
      ["rooted", defineJob({ name: "rooted", schema: tree, handler: () => {} })],
      ["ship", defineJob({ name: "ship", schema: z.object({ from: address, to: address }), handler: () => {} })],
    ]);
    const doc = openApiDocument(registry, zodPayloadSchemas);
    const refs: string[] = [];
    JSON.stringify(doc, (key, v: unknown) => (key === "$ref" && typeof v === "string" && refs.push(v), v));
    expect(refs.filter((r) => r.includes("$defs")).length).toBeGreaterThan(0);
    for (const ref of refs) {
      expect(ref.startsWith("#/"), ref).toBe(true);
      let at: unknown = doc;
      for (const part of ref.slice(2).split("/").map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"))) at = (at as Record<string, unknown> | undefined)?.[part];
      expect(at, ref).toBeTypeOf("object");
    }
    // A single enqueue's answer matches one branch of the response's oneOf, not both.
    const enqueued = (doc as any).paths["/api/jobs"].post.responses["201"].content["application/json"].schema.oneOf;
    expect(enqueued[1].required).toEqual(["items"]);
  });

  it("declares what the server checks and answers: reasons, the health check's body, the async tick's 202, the document's 404", () => {
    const doc = openApiDocument(new Map()) as any;
    const p = doc.paths;
    expect(p["/api/dead-letters"].get.parameters.find((x: { name: string }) => x.name === "reason").schema).toEqual({ enum: [...DEAD_REASONS] });
    const filter = p["/api/dead-letters/replay"].post.requestBody.content["application/json"].schema.oneOf[1].properties;
    expect(filter).toMatchObject({ reason: { enum: [...DEAD_REASONS] }, job: { minLength: 1 }, cursor: { minLength: 1 } });
    expect(p["/api/health"].get.responses["200"].content["application/json"].schema).toMatchObject({ required: ["ok", "lastTickAt"] });
    expect(Object.keys(p["/api/tick"].get.responses)).toContain("202");
    expect(Object.keys(p["/api/openapi.json"].get.responses)).toContain("404");
  });

  it("declares the 422 of every route that refuses a query parameter, and each such route refuses one", async () => {
    const p = (openApiDocument(new Map()) as any).paths;
    const refusing = (Object.values(ROUTES) as RouteSpec[]).filter((r) => r.auth === "token");
    expect(refusing.length).toBeGreaterThan(15);
    for (const route of refusing) {
      const where = `${route.method} ${route.path}`;
      expect(p[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()].responses["422"]?.description, where).toContain("invalid_options");
      // Before the route's own checks: a path that names nothing still says what is wrong with the query.
      const answer = await call(route.method, `${route.path.replace(/:(\w+)/g, "00000000-0000-7000-8000-000000000000")}?unknown=1`);
      expect([answer.status, answer.body?.error?.code], where).toEqual([422, "invalid_options"]);
    }
  });

  // The options repeated in each job's envelope were 86% of a 2.9 MB document at 2,000 jobs, made again for each
  // request where the queue is made per request (Vercel, Workers): 265 ms each.
  it("documents 2,000 jobs in about 300 bytes each beside their payloads, and once for queues made per request of the same jobs", async () => {
    const defs = Array.from({ length: 2_000 }, (_, i) => defineJob({ name: `app.job-number-${i}`, schema: z.object({ user: z.string() }), handler: () => {} }));
    const doc = openApiDocument(new Map(defs.map((d) => [d.name, d])));
    const schemas = (doc as { components: { schemas: Record<string, unknown> } }).components.schemas;
    const envelopes = JSON.stringify(schemas.Enqueue).length;
    expect(envelopes / 2_000).toBeLessThan(300);
    // Each option also as null, which the server reads as not given.
    expect(schemas.EnqueueOptions).toMatchObject({
      properties: { runAt: { anyOf: [{ type: "string" }, { type: "null" }] }, debounce: { anyOf: [{ required: ["key", "delayMs"] }, { type: "null" }] } },
    });
    let made = 0;
    const counting: typeof openApiDocument = (registry, schemas) => (made++, openApiDocument(registry, schemas));
    const perRequest = createApp({ jobs: async () => ({ jobs: h.make(defs.slice(0, 50)) }), env: { JOBS_API_TOKEN: API_TOKENS }, openApi: counting });
    for (let i = 0; i < 3; i++) expect((await caller(perRequest)("GET", "/api/openapi.json")).status).toBe(200);
    expect(made).toBe(1);
  });

  it("gives jobs whose names clean up alike their own OpenAPI components", () => {
    const schemaFor = (n: string) => z.object({ [n]: z.number() });
    const names = ["a:b", "a/b", "a_b"];
    const registry = new Map(names.map((name) => [name, defineJob({ name, schema: schemaFor(name), handler: () => {} })]));
    const doc = openApiDocument(registry, zodPayloadSchemas) as { components: { schemas: Record<string, { "x-job-name"?: string; properties?: object }> } };
    const payloads = Object.entries(doc.components.schemas).filter(([k]) => k.startsWith("Payload."));
    expect(payloads.map(([, v]) => v["x-job-name"]).sort()).toEqual([...names].sort());
    for (const [, v] of payloads) expect(Object.keys(v.properties!)).toEqual([v["x-job-name"]]);
  });

  it("answers unknown routes with 404 and wrong methods with 405 and Allow", async () => {
    expectError(await call("GET", "/api/nope"), 404, "no_route");
    expectError(await call("GET", "/elsewhere", { token: null }), 404, "no_route");
    const put = await call("PUT", "/api/jobs");
    expectError(put, 405, "method_not_allowed");
    expect(put.headers.get("allow")).toBe("GET, POST, HEAD");
    // The body says the same as the header.
    expect(put.body.error.details.allow).toEqual(["GET", "POST", "HEAD"]);
    const health = await call("POST", "/api/health", { token: null });
    expectError(health, 405, "method_not_allowed");
    // HEAD would run a tick: /api/tick allows GET and POST only, in the header and the body alike.
    const tick = await call("DELETE", "/api/tick", { token: null });
    expectError(tick, 405, "method_not_allowed");
    expect([tick.headers.get("allow"), tick.body.error.details.allow]).toEqual(["GET, POST", ["GET", "POST"]]);
  });

  it("answers 405 on every fixed path for the methods it does not take, also where a path with a parameter beside it would match", async () => {
    const { methodsByPath } = await import("../src/http/route-table.js");
    for (const [path, methods] of methodsByPath()) {
      if (path.includes(":")) continue;
      for (const method of ["GET", "POST", "DELETE"].filter((m) => !methods.includes(m))) {
        // Before: GET and DELETE /api/dead-letters/replay went to the routes of /api/dead-letters/:id (404, no Allow).
        const r = await call(method, path, { token: path === "/api/tick" ? null : undefined });
        expectError(r, 405, "method_not_allowed");
        expect(r.headers.get("allow"), `${method} ${path}`).toBe([...methods, ...(methods.includes("GET") && path !== "/api/tick" ? ["HEAD"] : [])].join(", "));
      }
    }
  });

  it("lists no schedules and 404s schedule actions when the deployment has none", async () => {
    expect((await call("GET", "/api/schedules")).body).toEqual({ items: [], nextCursor: null });
    expectError(await call("POST", "/api/schedules/nightly/pause"), 404, "not_found");
    expectError(await call("GET", "/api/schedules?next=-1"), 422, "invalid_options");
  });
});

describe("createApp options", () => {
  it("opens a per-request jobs instance only when a route needs it, and disposes it after every such request", async () => {
    let made = 0;
    let disposed = 0;
    const perRequest = createApp({
      jobs: async () => {
        made++;
        return { jobs: h.make([sendEmail]), dispose: async () => void disposed++ };
      },
      env: { JOBS_API_TOKEN: API_TOKENS },
    });
    const c = caller(perRequest);
    expectError(await c("GET", "/api/stats", { token: null }), 401, "unauthorized");
    expectError(await c("GET", "/api/nope"), 404, "no_route");
    expect([made, disposed]).toEqual([0, 0]);
    expect((await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } })).status).toBe(201);
    expectError(await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "bad" } } }), 422, "invalid_payload");
    expect((await c("GET", "/api/health", { token: null })).status).toBe(200);
    expect([made, disposed]).toEqual([3, 3]);
  });

  it("keeps a per-request jobs instance until a tick answered 202 has finished in the background", async () => {
    const setup = await h.isolated([sendEmail]);
    const { id } = await setup.enqueue("send-email", { to: "a@b.co" });
    const events: string[] = [];
    const background: Array<Promise<unknown>> = [];
    const perRequest = createApp({
      jobs: async () => {
        const pool = new pg.Pool({ connectionString: h.url, max: 2 });
        const jobs = h.make([sendEmail], { tablePrefix: setup.settings.tablePrefix }, pool);
        return { jobs, dispose: async () => (events.push("disposed"), await pool.end()) };
      },
      env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET },
      background: (work) => void background.push(work),
      tickOptions: { budgetMs: 3_000 },
    });
    const r = await caller(perRequest)("POST", "/api/tick", { token: CRON_SECRET, headers: { "x-pgtick-async": "1" } });
    expect(r.status).toBe(202);
    expect(events).toEqual([]);
    await Promise.all(background);
    expect(events).toEqual(["disposed"]);
    expect(await h.rows(`SELECT count(*)::int AS n FROM ${setup.tables.queue} WHERE id = $1`, [id])).toEqual([{ n: 0 }]);
  });

  it("answers a server fault with 500 internal, logs the stack and sends none; health says 503", async () => {
    const logged: Array<Record<string, unknown>> = [];
    const broken = h.make([sendEmail], {}, { query: async () => { throw new Error("connection refused to db.internal:5432 password=hunter2"); } });
    const c = caller(createApp({ jobs: broken, env: { JOBS_API_TOKEN: API_TOKENS }, logger: { log: (level, msg, fields) => void logged.push({ level, msg, ...fields }) } }));
    const r = await c("GET", "/api/stats");
    expect(r.status).toBe(500);
    expect(r.body).toEqual({ error: { code: "internal", message: "internal error" } });
    expect(logged).toEqual([expect.objectContaining({ level: "error", msg: "http request failed", path: "/api/stats", stack: expect.stringContaining("hunter2") })]);
    const health = await c("GET", "/api/health", { token: null });
    expect(health.status).toBe(503);
    expect(health.body.error.code).toBe("unavailable");
    expect(JSON.stringify(health.body)).not.toContain("hunter2");
    // A per-request connection that cannot even be opened is "unavailable" as well.
    const unopenable = caller(createApp({ jobs: async () => { throw new Error("DATABASE_URL is not set"); }, env: {}, logger: { log: () => {} } }));
    const closed = await unopenable("GET", "/api/health", { token: null });
    expect(closed.status).toBe(503);
    expect(closed.body.error.code).toBe("unavailable");
    // A setting the deployment got wrong: unavailable too, but said as such (it said the database did not answer).
    const said: string[] = [];
    const misset = caller(createApp({ jobs: async () => { throw new JobsError("invalid_config", "JOBS_MAX_TICKS must be a whole number from 1 to 256"); }, env: {}, logger: { log: (_l, msg) => void said.push(msg) } }));
    const wrong = await misset("GET", "/api/health", { token: null });
    expect([wrong.status, wrong.body.error]).toEqual([503, { code: "unavailable", message: "the server is misconfigured; see its logs" }]);
    expect(said).toEqual(["health check: misconfigured"]);
  });

  it("says a database that takes no writes (a standby, default_transaction_read_only) is misconfigured, not an internal error", async () => {
    const readOnly = new pg.Pool({ connectionString: h.url, max: 1, options: "-c default_transaction_read_only=on" });
    readOnly.on("error", () => {});
    try {
      const logged: string[] = [];
      const c = caller(createApp({ jobs: h.make([sendEmail], {}, readOnly), env: { JOBS_API_TOKEN: API_TOKENS }, logger: { log: (_l, msg) => void logged.push(msg) } }));
      const res = await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } } });
      expect([res.status, res.body.error]).toEqual([500, { code: "internal", message: "the server is misconfigured (DATABASE_URL's database takes no writes: a standby or read replica, or default_transaction_read_only); see its logs" }]);
      // The health check says so too (it read the tables and answered ok).
      const health = await c("GET", "/api/health", { token: null });
      expect([health.status, health.body.error]).toEqual([503, { code: "unavailable", message: "the server is misconfigured; see its logs" }]);
    } finally {
      await readOnly.end();
    }
  });

  it("keeps an enqueue that succeeded when the onEnqueued hook throws", async () => {
    await reset();
    const logged: string[] = [];
    const c = caller(createApp({
      jobs,
      env: { JOBS_API_TOKEN: API_TOKENS },
      onEnqueued: () => { throw new Error("kick failed"); },
      logger: { log: (_level, msg) => void logged.push(msg) },
    }));
    expect((await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } } })).status).toBe(201);
    expect(await count()).toBe(1);
    expect(logged).toEqual(["onEnqueued hook failed"]);
    // Nor when what it throws cannot be read: a null-prototype object, an error whose message getter throws (a 500, the job stored).
    const hostile = Object.defineProperty(new Error("x"), "message", { get: () => { throw new Error("no"); } });
    for (const thrown of [Object.create(null), hostile]) {
      const d = caller(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS }, onEnqueued: () => { throw thrown; }, logger: { log: () => {} } }));
      expect((await d("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } } })).status).toBe(201);
    }
    expect(await count()).toBe(3);
  });

  it("answers a TLS failure of the database connection as misconfigured, saying so (it was 500 internal error)", async () => {
    const tls = new Error("The server does not support SSL connections");
    const c = caller(createApp({ jobs: async () => { throw tls; }, env: { JOBS_API_TOKEN: API_TOKENS }, logger: { log: () => {} } }));
    const res = await c("GET", "/api/stats");
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ error: { message: expect.stringContaining("its TLS failed") } });
    // A connection reset during the handshake is an outage, whatever its words say: 503, try again.
    const reset = Object.assign(new Error("Client network socket disconnected before secure TLS connection was established"), { code: "ECONNRESET" });
    const d = caller(createApp({ jobs: async () => { throw reset; }, env: { JOBS_API_TOKEN: API_TOKENS }, logger: { log: () => {} } }));
    expect((await d("GET", "/api/stats")).status).toBe(503);
  });

  it("refuses a bad JOBS_MAX_BODY_BYTES at each request, as misconfigured (a deployment's functions stay up; see deploy-settings.test.ts)", async () => {
    const c = caller(createApp({ jobs, env: { JOBS_MAX_BODY_BYTES: "1MB", JOBS_API_TOKEN: API_TOKENS } }));
    const res = await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } } });
    expect([res.status, res.body.error.message]).toEqual([500, "the server is misconfigured; see its logs"]);
    expect((await c("GET", "/api/health")).status).toBe(503);
  });

  it("takes the tick options from a function of the request", async () => {
    let asked = 0;
    const c = caller(createApp({ jobs, env: { CRON_SECRET }, tickOptions: () => (asked++, { budgetMs: 1_000, concurrency: 1 }) }));
    expect((await c("GET", "/api/tick", { token: CRON_SECRET })).status).toBe(200);
    expect(asked).toBe(1);
  });
});
