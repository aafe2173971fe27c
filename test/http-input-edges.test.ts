// Inputs at the edges of what the API takes: how deep a payload may be (the same bound in the
// library, over HTTP, in a batch and in an edited replay), Idempotency-Key headers a server cannot
// read back as sent, a replay body of JSON null, and the 503 every route may answer.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { defineJob, isJobsError, PermanentJobError } from "../src/index.js";
import { API_TOKENS, caller, CRON_SECRET } from "./http-support.js";
import { expectError } from "./support/http-fixture.js";
import { harness } from "./support/harness.js";

const h = await harness("http_edges");
const tree = defineJob({ name: "tree", schema: z.object({ a: z.unknown() }), handler: () => {} });
const broken = defineJob({ name: "broken", schema: z.object({ a: z.unknown() }), handler: () => { throw new PermanentJobError("on purpose"); } });
const jobs = h.make([tree, broken]);
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET } });
const call = caller(app);
const queued = async () => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM jobs_queue`))[0]!.n);

/** A payload `depth` objects deep: `{ a: { a: ... 1 } }`. */
const nested = (depth: number): { a: unknown } => {
  let v: unknown = 1;
  for (let i = 1; i < depth; i++) v = { a: v };
  return { a: v };
};

describe("payload depth", () => {
  it("takes a payload 100 levels deep everywhere and refuses 101 everywhere, storing nothing", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    expect((await call("POST", "/api/jobs", { json: { job: "tree", payload: nested(100) } })).status).toBe(201);
    expect((await call("POST", "/api/jobs", { json: [{ job: "tree", payload: nested(100) }] })).status).toBe(201);
    await jobs.enqueue("tree", nested(100));
    expect(await queued()).toBe(3);

    const one = await call("POST", "/api/jobs", { json: { job: "tree", payload: nested(101) } });
    expectError(one, 422, "invalid_payload");
    expect(one.body.error.message).toMatch(/payload for tree is nested deeper than 100 levels/);
    expectError(await call("POST", "/api/jobs", { json: [{ job: "tree", payload: nested(101) }] }), 422, "invalid_payload");
    const lib = await jobs.enqueue("tree", nested(101)).catch((e: unknown) => e);
    expect(isJobsError(lib) && lib.code).toBe("invalid_payload");
    expect(await queued()).toBe(3);
    // Brackets and escaped quotes inside strings are text, not depth.
    const texty = { a: `${"[{".repeat(300)}\\"${"]}".repeat(300)}`, b: ["\"[[[", "\\", "{{{\""] };
    expect((await call("POST", "/api/jobs", { json: { job: "tree", payload: texty } })).status).toBe(201);
    await jobs.enqueue("tree", texty);
    expect(await queued()).toBe(5);
  });

  it("refuses an integer JavaScript would round (a 64-bit id) instead of storing another number, and takes every other number as JSON reads it", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const json = { "content-type": "application/json" };
    const raw = (payload: string) => call("POST", "/api/jobs", { raw: `{"job":"tree","payload":{"a":${payload}}}`, headers: json });
    for (const big of ["1234567890123456789", "-9007199254740993", "[1, 18446744073709551615]"]) {
      const r = await raw(big);
      expectError(r, 422, "invalid_payload");
      expect(r.body.error.message).toMatch(/cannot be held exactly .*send it as a string/);
    }
    expect(await queued()).toBe(0);
    // Within 2^53, exact however written; a fraction's or an exponent's digits, and digits in a string, are not integers to refuse.
    for (const fine of ["9007199254740991", "100000000000000000000", "0.1000000000000000055511151231257827", "1.2345678901234567891e5", `"1234567890123456789"`]) {
      expect((await raw(fine)).status).toBe(201);
    }
    expect(await queued()).toBe(5);
    // Every route that reads a JSON body, and /api/stats's refusal of query parameters, say so in the OpenAPI document.
    const doc = (await call("GET", "/api/openapi.json")).body as { paths: Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown> }>> };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ at: `${method} ${path}`, op })));
    for (const { at, op } of operations.filter((o) => o.op.requestBody)) expect(Object.keys(op.responses), at).toContain("422");
    expect(Object.keys(doc.paths["/api/stats"]!.get!.responses)).toContain("422");
  });

  it("refuses an edited replay nested deeper than a payload may be, and the letter stays", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const { id } = await jobs.enqueue("broken", { a: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    expect((await jobs.deadLetters.get(id))?.id).toBe(id);
    const edited = await jobs.deadLetters.replay(id, { payload: nested(101) }).catch((e: unknown) => e);
    expect(isJobsError(edited) && edited.code).toBe("invalid_payload");
    expectError(await call("POST", `/api/dead-letters/${id}/replay`, { json: { payload: nested(101) } }), 422, "invalid_payload");
    expect((await jobs.deadLetters.get(id))?.payload).toEqual({ a: 1 });
    expect(await queued()).toBe(0);
  });
});

describe("replay bodies", () => {
  it("refuses a replay whose body is JSON null, as any body that is not an object, and the letter stays", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const { id } = await jobs.enqueue("broken", { a: 2 });
    await jobs.tick({ budgetMs: 5_000 });
    for (const raw of ["null", "[]", '"x"']) {
      const r = await call("POST", `/api/dead-letters/${id}/replay`, { raw, headers: { "content-type": "application/json" } });
      expectError(r, 422, "invalid_options");
    }
    expect((await jobs.deadLetters.get(id))?.id).toBe(id);
    expect(await queued()).toBe(0);
    // No body at all replays it as it was.
    expect((await call("POST", `/api/dead-letters/${id}/replay`)).body).toEqual({ id, replayed: true });
  });
});

describe("Idempotency-Key header", () => {
  it("refuses a header it cannot read back as sent (not ASCII, or two joined by a comma) and stores nothing", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    // Node reads header bytes one per character: café sent as UTF-8 arrives as cafÃ©.
    for (const key of ["cafÃ©", "café", "a1, b1"]) {
      const r = await call("POST", "/api/jobs", { json: { job: "tree", payload: { a: 1 } }, headers: { "idempotency-key": key } });
      expectError(r, 422, "invalid_options");
      expect(r.body.error.details.field).toBe("Idempotency-Key");
    }
    expect(await queued()).toBe(0);
    const ok = await call("POST", "/api/jobs", { json: { job: "tree", payload: { a: 1 } }, headers: { "idempotency-key": "order-42:v1" } });
    expect(ok.status).toBe(201);
    const again = await call("POST", "/api/jobs", { json: { job: "tree", payload: { a: 1 }, idempotencyKey: "order-42:v1" } });
    expect(again.body).toEqual({ id: ok.body.id, deduplicated: true });
  });
});

describe("query parameters", () => {
  it("are refused on a route that takes none, and nothing is done (POST /api/jobs?delayMs=3600000 stored a job due now)", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const enqueue = await call("POST", "/api/jobs?delayMs=3600000&idempotencyKey=abc", { json: { job: "tree", payload: { a: 1 } } });
    expectError(enqueue, 422, "invalid_options");
    expect(enqueue.body.error).toMatchObject({ message: expect.stringMatching(/unknown query parameter "delayMs"; this route takes none/), details: { field: "delayMs" } });
    expect(await queued()).toBe(0);
    const { id } = await jobs.enqueue("tree", { a: 2 }, { delayMs: 60_000 });
    expectError(await call("DELETE", `/api/jobs/${id}?dryRun=true`), 422, "invalid_options");
    expect(await queued()).toBe(1);
    // Lists and the tick keep theirs: a list's filters, and what a scheduler adds to the tick's address.
    expect((await call("GET", "/api/jobs?job=tree")).status).toBe(200);
    expect((await call("POST", "/api/tick?from=cron", { token: CRON_SECRET })).status).toBe(200);
  });
});

describe("routes", () => {
  it("answers a path that names no route with no_route, which a client can tell from a missing job", async () => {
    const r = await call("GET", "/v2/api/jobs/00000000-0000-4000-8000-000000000000");
    expectError(r, 404, "no_route");
    expectError(await call("GET", "/api/jobs/00000000-0000-4000-8000-000000000000"), 404, "not_found");
  });

  it("says which secret a route takes when the token given is not it", async () => {
    const tick = await call("POST", "/api/tick");
    expectError(tick, 401, "unauthorized");
    expect(tick.body.error.message).toBe("the token is not valid: this route takes CRON_SECRET");
    const jobsRoute = await call("GET", "/api/jobs", { token: CRON_SECRET });
    expect(jobsRoute.body.error.message).toBe("the token is not valid: this route takes JOBS_API_TOKEN");
  });

  it("documents 503 unavailable on every route that runs a statement, and 401 on every route behind a secret", async () => {
    const doc = (await call("GET", "/api/openapi.json")).body as { paths: Record<string, Record<string, { operationId?: string; responses?: Record<string, unknown> }>> };
    const ops = Object.values(doc.paths).flatMap((p) => Object.values(p).filter((op) => typeof op === "object" && op !== null && "operationId" in op));
    expect(ops.length).toBeGreaterThan(15);
    for (const op of ops) {
      if (op.operationId !== "health") expect(Object.keys(op.responses ?? {}), op.operationId).toContain("401");
      if (op.operationId === "openapi") continue;
      expect(Object.keys(op.responses ?? {}), op.operationId).toContain("503");
    }
  });
});
