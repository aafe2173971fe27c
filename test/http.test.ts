import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/api-app.js";
import { openApiDocument } from "../src/http/openapi.js";
import { decodeCursor } from "../src/store/shared/paging.js";
import { defineJob, PermanentJobError } from "../src/index.js";
import { API_TOKENS, caller, chunkedBody, CRON_SECRET, NEW_TOKEN, OLD_TOKEN } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("http");

const sendEmail = defineJob({ name: "send-email", schema: z.object({ to: z.string().email(), subject: z.string().optional() }), handler: () => {} });
const echo = defineJob({ name: "ns:echo/v1.x_y", schema: z.object({ text: z.string(), tags: z.array(z.string()).optional() }), handler: () => {} });
const fails = defineJob({
  name: "fails",
  schema: z.object({ n: z.number().int() }),
  handler: () => {
    throw new PermanentJobError("broken on purpose");
  },
});
const jobs = h.make([sendEmail, echo, fails], { concurrency: 20, batchSize: 20, maxPayloadBytes: 2_000 });
const kicks: Array<{ ids: string[]; dueNow: boolean }> = [];
const app = createApp({
  jobs,
  env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET, JOBS_MAX_BODY_BYTES: "4096" },
  onEnqueued: (info) => void kicks.push(info),
  tickOptions: { budgetMs: 5_000 },
});
const call = caller(app);

const count = async (table = "jobs_queue") => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
const reset = async () => {
  await h.rows(`DELETE FROM jobs_queue`);
  await h.rows(`DELETE FROM jobs_dead_letters`);
  kicks.length = 0;
};
const expectError = (r: { status: number; body: any }, status: number, code: string) => {
  expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status, code });
  expect(typeof r.body.error.message).toBe("string");
  expect(JSON.stringify(r.body)).not.toMatch(/\bat .*\.ts:\d+/); // never a stack
};
/** Makes dead letters: enqueue `fails` jobs and tick them. */
const makeDead = async (ns: number[]) => {
  const r = await call("POST", "/api/jobs", { json: ns.map((n) => ({ job: "fails", payload: { n } })) });
  expect(r.status).toBe(201);
  await jobs.tick({ budgetMs: 5_000 });
  return (r.body.items as Array<{ id: string }>).map((i) => i.id);
};

describe("auth", () => {
  it("refuses a missing or wrong token with 401 and WWW-Authenticate, and accepts both rotated tokens", async () => {
    const missing = await call("GET", "/api/stats", { token: null });
    expectError(missing, 401, "unauthorized");
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer realm=/);
    const wrong = await call("GET", "/api/stats", { token: "token-new-987654321X" });
    expectError(wrong, 401, "unauthorized");
    expect(wrong.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expectError(await call("GET", "/api/stats", { token: null, headers: { authorization: `Basic ${btoa("a:b")}` } }), 401, "unauthorized");
    expect((await call("GET", "/api/stats", { token: OLD_TOKEN })).status).toBe(200);
    expect((await call("GET", "/api/stats", { token: NEW_TOKEN })).status).toBe(200);
    expect((await call("GET", "/api/stats", { token: null, headers: { authorization: `bearer ${NEW_TOKEN}` } })).status).toBe(200);
    // A prefix or an extension of a valid token is not valid.
    expectError(await call("GET", "/api/stats", { token: NEW_TOKEN.slice(0, -1) }), 401, "unauthorized");
    expectError(await call("GET", "/api/stats", { token: `${NEW_TOKEN}x` }), 401, "unauthorized");
  });

  it("keeps the cron secret and the API token apart", async () => {
    await reset();
    expectError(await call("POST", "/api/jobs", { token: CRON_SECRET, json: { job: "send-email", payload: { to: "a@b.co" } } }), 401, "unauthorized");
    expect(await count()).toBe(0);
    expectError(await call("POST", "/api/tick", { token: NEW_TOKEN }), 401, "unauthorized");
    expectError(await call("GET", "/api/tick", { token: null }), 401, "unauthorized");
    const tick = await call("GET", "/api/tick", { token: CRON_SECRET });
    expect(tick.status).toBe(200);
    expect(tick.body).toMatchObject({ claimed: 0, succeeded: 0, statements: 1 });
  });

  it("takes CRON_SECRET as one value, exactly as a platform cron sends it (no comma list)", async () => {
    const c = caller(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET: "part-one,part-two" } }));
    expect((await c("GET", "/api/tick", { token: "part-one,part-two" })).status).toBe(200);
    expectError(await c("GET", "/api/tick", { token: "part-one" }), 401, "unauthorized");
  });

  it("is closed, and says why, when no token is configured", async () => {
    const closed = createApp({ jobs, env: {} });
    const c = caller(closed);
    const r = await c("GET", "/api/stats", { token: "anything" });
    expectError(r, 401, "unauthorized");
    expect(r.body.error.message).toContain("JOBS_API_TOKEN is not set");
    const t = await c("POST", "/api/tick", { token: "" });
    expectError(t, 401, "unauthorized");
    expect(t.body.error.message).toContain("CRON_SECRET is not set");
    // Empty entries in the list do not count as a token.
    const blank = caller(createApp({ jobs, env: { JOBS_API_TOKEN: " , ," } }));
    expect((await blank("GET", "/api/stats", { token: null, headers: { authorization: "Bearer ," } })).status).toBe(401);
  });

  it("serves health without auth and without secrets", async () => {
    const r = await call("GET", "/api/health", { token: null });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["lastTickAt", "ok"]);
    expect(JSON.stringify(r.body)).not.toContain("token");
  });
});

describe("POST /api/jobs", () => {
  it("enqueues one job: 201 with its id, stored as sent, and kicks", async () => {
    await reset();
    const r = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co", subject: "hi" }, priority: 3, correlationId: "req-1" } });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), deduplicated: false });
    const got = await call("GET", `/api/jobs/${r.body.id}`);
    expect(got.body).toMatchObject({ id: r.body.id, job: "send-email", status: "queued", payload: { to: "a@b.co", subject: "hi" }, priority: 3, attempt: 0, correlationId: "req-1" });
    expect(kicks).toEqual([{ ids: [r.body.id], dueNow: true }]);
  });

  it("dedupes on an idempotency key from the body or the Idempotency-Key header: 200 with the first id", async () => {
    await reset();
    const first = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" } }, headers: { "idempotency-key": "k1" } });
    expect(first.status).toBe(201);
    const again = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "x@y.co" }, idempotencyKey: "k1" } });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ id: first.body.id, deduplicated: true });
    expect(await count()).toBe(1);
    expect(kicks).toHaveLength(1);
    const clash = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, idempotencyKey: "k2" }, headers: { "idempotency-key": "k3" } });
    expectError(clash, 422, "invalid_options");
    expect(await count()).toBe(1);
  });

  it("delays with delayMs and runAt (not due now: the kick says so)", async () => {
    await reset();
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const a = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, runAt: later } });
    const b = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect((await call("GET", `/api/jobs/${a.body.id}`)).body.runAt).toBe(later.replace("Z", "000Z"));
    expect(kicks.map((k) => k.dueNow)).toEqual([false, false]);
    expectError(await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, runAt: later, delayMs: 5 } }), 422, "invalid_options");
    expectError(await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, runAt: "+275760-09-13T00:00:00.000Z" } }), 422, "invalid_options");
    expect(await count()).toBe(2);
  });

  it("enqueues a batch in one statement; one bad item stores nothing and the error names its index", async () => {
    await reset();
    const ok = await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "a@b.co" } }, { job: "ns:echo/v1.x_y", payload: { text: "t" } }] });
    expect(ok.status).toBe(201);
    expect(ok.body.items).toHaveLength(2);
    const bad = await call("POST", "/api/jobs", {
      json: [{ job: "send-email", payload: { to: "c@d.co" } }, { job: "send-email", payload: { to: "not an email" } }],
    });
    expectError(bad, 422, "invalid_payload");
    expect(bad.body.error.details.index).toBe(1);
    expect(bad.body.error.details.issues[0].path).toEqual(["to"]);
    const unknown = await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "c@d.co" } }, { job: "nope", payload: {} }] });
    expectError(unknown, 404, "unknown_job");
    expect(unknown.body.error.details.index).toBe(1);
    const envelope = await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "c@d.co" } }, { job: "send-email", payload: {}, runat: "x" }] });
    expectError(envelope, 422, "invalid_options");
    expect(envelope.body.error.details.index).toBe(1);
    expectError(await call("POST", "/api/jobs", { json: [] }), 422, "invalid_options");
    expectError(await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "a@b.co" } }], headers: { "idempotency-key": "k" } }), 422, "invalid_options");
    expect(await count()).toBe(2);
  });

  it("answers every malformed request with its code and stores nothing", async () => {
    await reset();
    const cases: Array<[Parameters<typeof call>[2], number, string]> = [
      [{ raw: "{not json", headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: "", headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: new Uint8Array([0x7b, 0xff, 0x7d]), headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: '{"job":"send-email","payload":{"to":"a@b.co"}}', headers: { "content-type": "text/plain" } }, 415, "unsupported_media_type"],
      [{ raw: '{"job":"send-email","payload":{"to":"a@b.co"}}' }, 415, "unsupported_media_type"],
      [{ json: { job: "nope", payload: {} } }, 404, "unknown_job"],
      [{ json: { job: "send-email", payload: { to: 5 } } }, 422, "invalid_payload"],
      [{ json: { job: "send-email" } }, 422, "invalid_payload"],
      [{ json: { job: "ns:echo/v1.x_y", payload: { text: "a\u0000b" } } }, 422, "invalid_payload"],
      [{ raw: '{"job":"ns:echo/v1.x_y","payload":{"text":"\\ud800"}}', headers: { "content-type": "application/json" } }, 422, "invalid_payload"],
      [{ json: { job: "ns:echo/v1.x_y", payload: { text: "x".repeat(2_100) } } }, 413, "payload_too_large"],
      [{ json: { job: "send-email", payload: { to: "a@b.co" }, maxAttempts: 0 } }, 422, "invalid_options"],
      [{ json: { job: "send-email", payload: { to: "a@b.co" }, priority: 1.5 } }, 422, "invalid_options"],
      [{ json: { job: "send-email", payload: { to: "a@b.co" }, idempotencyKey: "k".repeat(256) } }, 422, "invalid_options"],
      [{ json: "just a string" }, 422, "invalid_options"],
      [{ json: null }, 422, "invalid_options"],
      [{ raw: `{"job":"ns:echo/v1.x_y","payload":{"text":"t","tags":${"[".repeat(150)}${"]".repeat(150)}}}`, headers: { "content-type": "application/json" } }, 422, "invalid_payload"],
    ];
    for (const [options, status, code] of cases) {
      const r = await call("POST", "/api/jobs", options);
      expectError(r, status, code);
    }
    expect(await count()).toBe(0);
    expect(kicks).toEqual([]);
  });

  it("enforces the body limit before parsing, with and without Content-Length", async () => {
    await reset();
    const big = JSON.stringify({ job: "ns:echo/v1.x_y", payload: { text: "x".repeat(5_000) } });
    expectError(await call("POST", "/api/jobs", { raw: big, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    // Chunked: no Content-Length, 100 chunks of 1 KiB; refused once the count passes 4096.
    let pulled = 0;
    const stream = chunkedBody(100, 1024);
    const counting = stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ transform: (chunk, ctl) => (pulled++, ctl.enqueue(chunk)) }));
    const r = await call("POST", "/api/jobs", { raw: counting, headers: { "content-type": "application/json" } });
    expectError(r, 413, "payload_too_large");
    expect(pulled).toBeLessThan(100);
    // A lying small Content-Length is no way around it either: the bytes are counted.
    const small = chunkedBody(10, 1024);
    expectError(await call("POST", "/api/jobs", { raw: small, headers: { "content-type": "application/json" } }), 413, "payload_too_large");
    // Under the limit, chunked works.
    const okBody = new TextEncoder().encode(JSON.stringify({ job: "send-email", payload: { to: "a@b.co" } }));
    const okStream = new ReadableStream({ start: (ctl) => (ctl.enqueue(okBody.slice(0, 10)), ctl.enqueue(okBody.slice(10)), ctl.close()) });
    expect((await call("POST", "/api/jobs", { raw: okStream, headers: { "content-type": "application/json" } })).status).toBe(201);
    expectError(await call("POST", "/api/jobs", { raw: "{}", headers: { "content-type": "application/json", "content-length": "999999" } }), 413, "payload_too_large");
    expect(await count()).toBe(1);
  });

  it("stores one row for 200 concurrent enqueues with one idempotency key", async () => {
    await reset();
    const pool = h.pool(40);
    const concurrentJobs = h.make([sendEmail, echo, fails], {}, pool);
    const c = caller(createApp({ jobs: concurrentJobs, env: { JOBS_API_TOKEN: API_TOKENS } }));
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: `u${i}@b.co` } }, headers: { "idempotency-key": "one-key" } })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(199);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await count()).toBe(1);
  });

  it("round-trips SQL metacharacters, quotes and non-Latin text exactly", async () => {
    await reset();
    const nasty = `'; DROP TABLE jobs_queue; -- "q" \\ $1 %s \` 日本語 ✓ עברית 🎉 Ω`;
    const payload = { text: nasty, tags: [nasty, "O'Brien", "\\\\", "{\"a\":1}", "\u2028\u2029", "𝔘𝔫𝔦"] };
    const r = await call("POST", "/api/jobs", { json: { job: "ns:echo/v1.x_y", payload, idempotencyKey: nasty, correlationId: nasty } });
    expect(r.status).toBe(201);
    const got = await call("GET", `/api/jobs/${r.body.id}`);
    expect(got.body).toMatchObject({ job: "ns:echo/v1.x_y", payload, idempotencyKey: nasty, correlationId: nasty });
    const list = await call("GET", `/api/jobs?job=${encodeURIComponent("ns:echo/v1.x_y")}`);
    expect(list.body.items.map((j: { id: string }) => j.id)).toEqual([r.body.id]);
    // The list row's preview is the payload's whole JSON text here: it parses back to the payload.
    expect(list.body.items[0]).toMatchObject({ payloadTruncated: false });
    expect(JSON.parse(list.body.items[0].payloadPreview)).toEqual(payload);
    const sneaky = await call("GET", `/api/jobs?job=${encodeURIComponent("x' OR '1'='1")}`);
    expect(sneaky.body.items).toEqual([]);
    const dedup = await call("POST", "/api/jobs", { json: { job: "ns:echo/v1.x_y", payload }, headers: { "idempotency-key": encodeURIComponent(nasty) } });
    expect(dedup.status).toBe(201); // header values are bytes; the percent-encoded text is another key
    expect(await count()).toBe(2);
  });
});

describe("jobs", () => {
  it("lists with filters and keyset pagination, newest first", async () => {
    await reset();
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push((await call("POST", "/api/jobs", { json: { job: i % 2 ? "ns:echo/v1.x_y" : "send-email", payload: i % 2 ? { text: `${i}` } : { to: "a@b.co" }, delayMs: 60_000 } })).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { status: number; body: any } = await call("GET", `/api/jobs?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(r.status).toBe(200);
      expect(r.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...r.body.items.map((j: { id: string }) => j.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
    const echoes = await call("GET", "/api/jobs?job=ns%3Aecho%2Fv1.x_y&status=queued");
    expect(echoes.body.items.map((j: { id: string }) => j.id)).toEqual([ids[5], ids[3], ids[1]]);
    expect((await call("GET", "/api/jobs?status=running")).body).toEqual({ items: [], nextCursor: null });
    // A well-formed cursor whose date does not exist (February 30th) is refused too, not passed to PostgreSQL.
    const impossible = btoa(JSON.stringify(["2024-02-30T00:00:00.000000Z", crypto.randomUUID()])).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    for (const q of ["status=dead", "limit=0", "limit=501", "limit=abc", "cursor=nope", "cursor=W10", `cursor=${impossible}`, "job=%00", "jobs=x", "limit=1&limit=2"]) {
      expectError(await call("GET", `/api/jobs?${q}`), 422, "invalid_options");
    }
    // Refused by the store itself, so the dashboard (which has no SQLSTATE mapping) refuses it the same way.
    expect(() => decodeCursor(impossible)).toThrow("cursor");
  });

  it("gets a job by id, 404 for unknown or malformed ids", async () => {
    expectError(await call("GET", `/api/jobs/${crypto.randomUUID()}`), 404, "not_found");
    expectError(await call("GET", "/api/jobs/not-a-uuid"), 404, "not_found");
    expectError(await call("GET", "/api/jobs/%27%3B%20--"), 404, "not_found");
  });

  it("cancels a queued job, refuses a running one with 409", async () => {
    await reset();
    const queued = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } })).body.id;
    const del = await call("DELETE", `/api/jobs/${queued}`);
    expect(del).toMatchObject({ status: 200, body: { id: queued, cancelled: true } });
    expectError(await call("DELETE", `/api/jobs/${queued}`), 404, "not_found");
    const running = crypto.randomUUID();
    await h.rows(
      `INSERT INTO jobs_queue (id, job_name, payload, status, attempt, lease_owner, lease_expires_at) VALUES ($1, 'send-email', '{}', 'running', 1, gen_random_uuid(), now() + interval '1 minute')`,
      [running],
    );
    expectError(await call("DELETE", `/api/jobs/${running}`), 409, "conflict");
    expect((await call("GET", `/api/jobs/${running}`)).body.status).toBe("running");
    expectError(await call("DELETE", "/api/jobs/xyz"), 404, "not_found");
  });

  it("runs a delayed job now (and kicks a tick), leaves a due one in its place, refuses a running one with 409", async () => {
    await reset();
    const later = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 3_600_000 } })).body.id;
    const due = (await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "c@d.co" } } })).body.id;
    const dueAt = (await call("GET", `/api/jobs/${due}`)).body.runAt;
    kicks.length = 0;
    const moved = await call("POST", `/api/jobs/${later}/run`);
    expect(moved).toMatchObject({ status: 200, body: { id: later, moved: true } });
    expect(Date.parse(moved.body.runAt)).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(kicks).toEqual([{ ids: [later], dueNow: true }]);
    const [row] = await h.rows<{ due: boolean }>(`SELECT run_at <= now() AS due FROM jobs_queue WHERE id = $1`, [later]);
    expect(row!.due).toBe(true);
    const same = await call("POST", `/api/jobs/${due}/run`);
    expect(same).toMatchObject({ status: 200, body: { id: due, moved: false, runAt: dueAt } });
    expect(kicks).toHaveLength(1);
    const running = crypto.randomUUID();
    await h.rows(
      `INSERT INTO jobs_queue (id, job_name, payload, status, attempt, lease_owner, lease_expires_at) VALUES ($1, 'send-email', '{}', 'running', 1, gen_random_uuid(), now() + interval '1 minute')`,
      [running],
    );
    expectError(await call("POST", `/api/jobs/${running}/run`), 409, "conflict");
    expectError(await call("POST", `/api/jobs/${crypto.randomUUID()}/run`), 404, "not_found");
    expectError(await call("POST", "/api/jobs/nope/run"), 404, "not_found");
  });
});

describe("dead letters", () => {
  it("pages through dead letters newest first by cursor, with no repeat or gap, while new ones arrive", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3, 4, 5, 6, 7]);
    // Distinct death times, newest last in `ids`: the order a page must follow.
    await h.rows(`UPDATE jobs_dead_letters d SET dead_at = now() - (x.i || ' minutes')::interval
                  FROM unnest($1::uuid[]) WITH ORDINALITY AS x(id, i) WHERE d.id = x.id`, [[...ids].reverse()]);
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const page: { status: number; body: any } = await call("GET", `/api/dead-letters?job=fails&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      sizes.push(page.body.items.length);
      seen.push(...page.body.items.map((d: { id: string }) => d.id));
      cursor = page.body.nextCursor;
      // A dead letter that arrives while paging is newer than every cursor: it never shows up in later pages.
      if (sizes.length === 1) await makeDead([99]);
    } while (cursor);
    expect(sizes).toEqual([3, 3, 1]);
    expect(seen).toEqual([...ids].reverse());
    expectError(await call("GET", "/api/dead-letters?cursor=not-a-cursor"), 422, "invalid_options");
    expectError(await call("GET", "/api/dead-letters?limit=501"), 422, "invalid_options");
  });

  it("lists, gets and shows a dead job through /api/jobs/:id", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3]);
    const page1 = await call("GET", "/api/dead-letters?limit=2&job=fails");
    expect(page1.body.items).toHaveLength(2);
    const page2 = await call("GET", `/api/dead-letters?limit=2&cursor=${page1.body.nextCursor}`);
    expect(page2.body).toMatchObject({ nextCursor: null });
    expect(new Set([...page1.body.items, ...page2.body.items].map((d: { id: string }) => d.id))).toEqual(new Set(ids));
    const one = await call("GET", `/api/dead-letters/${ids[0]}`);
    expect(one.body).toMatchObject({ id: ids[0], job: "fails", payload: { n: 1 }, reason: "permanent", attempts: 1, lastError: "PermanentJobError: broken on purpose" });
    expect((await call("GET", `/api/jobs/${ids[0]}`)).body).toMatchObject({ status: "dead", reason: "permanent" });
    expect((await call("GET", "/api/dead-letters?reason=exhausted")).body.items).toEqual([]);
    expectError(await call("GET", `/api/dead-letters/${crypto.randomUUID()}`), 404, "not_found");
  });

  it("replays one, as is or with an edited payload validated by the job's schema", async () => {
    await reset();
    const [a, b] = await makeDead([1, 2]);
    const r = await call("POST", `/api/dead-letters/${a}/replay`);
    expect(r).toMatchObject({ status: 200, body: { id: a, replayed: true } });
    expect((await call("GET", `/api/jobs/${a}`)).body).toMatchObject({ status: "queued", attempt: 0, payload: { n: 1 } });
    expectError(await call("POST", `/api/dead-letters/${a}/replay`), 404, "not_found");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: "two" } } }), 422, "invalid_payload");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: 2 }, extra: 1 } }), 422, "invalid_options");
    expectError(await call("POST", `/api/dead-letters/${b}/replay`, { raw: "{", headers: { "content-type": "application/json" } }), 400, "malformed_json");
    expect((await call("GET", `/api/dead-letters/${b}`)).body.payload).toEqual({ n: 2 });
    const edited = await call("POST", `/api/dead-letters/${b}/replay`, { json: { payload: { n: 20 } } });
    expect(edited.status).toBe(200);
    expect((await call("GET", `/api/jobs/${b}`)).body.payload).toEqual({ n: 20 });
    expect(kicks.slice(-2)).toEqual([{ ids: [a], dueNow: true }, { ids: [b], dueNow: true }]);
  });

  it("queues a dead letter once when 30 replay requests race", async () => {
    await reset();
    const [id] = await makeDead([7]);
    const pool = h.pool(30);
    const c = caller(createApp({ jobs: h.make([sendEmail, echo, fails], {}, pool), env: { JOBS_API_TOKEN: API_TOKENS } }));
    const results = await Promise.all(Array.from({ length: 30 }, () => c("POST", `/api/dead-letters/${id}/replay`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 404)).toHaveLength(29);
    expect(await count()).toBe(1);
    expect(await count("jobs_dead_letters")).toBe(0);
  });

  it("refuses a replay with 409 while a live job holds its idempotency key", async () => {
    await reset();
    const dead = await call("POST", "/api/jobs", { json: { job: "fails", payload: { n: 1 }, idempotencyKey: "held" } });
    await jobs.tick({ budgetMs: 5_000 });
    await call("POST", "/api/jobs", { json: { job: "fails", payload: { n: 2 }, idempotencyKey: "held", delayMs: 60_000 } });
    expectError(await call("POST", `/api/dead-letters/${dead.body.id}/replay`), 409, "conflict");
    expect(await count("jobs_dead_letters")).toBe(1);
  });

  it("bulk-replays by ids and by job", async () => {
    await reset();
    const ids = await makeDead([1, 2, 3, 4]);
    const byIds = await call("POST", "/api/dead-letters/replay", { json: { ids: [ids[0], ids[1], "nope"] } });
    expect(byIds.status).toBe(200);
    expect(new Set(byIds.body.replayed)).toEqual(new Set([ids[0], ids[1]]));
    expect(byIds.body.skipped).toEqual([{ id: "nope", reason: "not_found" }]);
    const byJob = await call("POST", "/api/dead-letters/replay", { json: { job: "fails", limit: 1 } });
    expect(byJob.body).toMatchObject({ remaining: 1 });
    expect(byJob.body.replayed).toHaveLength(1);
    for (const bad of [{}, { ids: [] }, { ids: ids, job: "fails" }, { job: "" }, { job: "fails", limit: 0 }]) {
      expectError(await call("POST", "/api/dead-letters/replay", { json: bad }), 422, "invalid_options");
    }
    expect(await count("jobs_dead_letters")).toBe(1);
  });

  it("discards a dead letter", async () => {
    await reset();
    const [id] = await makeDead([1]);
    expect(await call("DELETE", `/api/dead-letters/${id}`)).toMatchObject({ status: 200, body: { id, discarded: true } });
    expectError(await call("DELETE", `/api/dead-letters/${id}`), 404, "not_found");
  });
});

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

  it("gives jobs whose names clean up alike their own OpenAPI components", () => {
    const schemaFor = (n: string) => z.object({ [n]: z.number() });
    const names = ["a:b", "a/b", "a_b"];
    const registry = new Map(names.map((name) => [name, defineJob({ name, schema: schemaFor(name), handler: () => {} })]));
    const doc = openApiDocument(registry) as { components: { schemas: Record<string, { "x-job-name"?: string; properties?: object }> } };
    const payloads = Object.entries(doc.components.schemas).filter(([k]) => k.startsWith("Payload."));
    expect(payloads.map(([, v]) => v["x-job-name"]).sort()).toEqual([...names].sort());
    for (const [, v] of payloads) expect(Object.keys(v.properties!)).toEqual([v["x-job-name"]]);
  });

  it("answers unknown routes with 404 and wrong methods with 405 and Allow", async () => {
    expectError(await call("GET", "/api/nope"), 404, "not_found");
    expectError(await call("GET", "/elsewhere", { token: null }), 404, "not_found");
    const put = await call("PUT", "/api/jobs");
    expectError(put, 405, "method_not_allowed");
    expect(put.headers.get("allow")).toBe("GET, POST, HEAD");
    const health = await call("POST", "/api/health", { token: null });
    expectError(health, 405, "method_not_allowed");
    expectError(await call("DELETE", "/api/tick", { token: null }), 405, "method_not_allowed");
  });

  it("lists no schedules and 404s schedule actions when the deployment has none", async () => {
    expect((await call("GET", "/api/schedules")).body).toEqual({ items: [] });
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
    expectError(await c("GET", "/api/nope"), 404, "not_found");
    expect([made, disposed]).toEqual([0, 0]);
    expect((await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 60_000 } })).status).toBe(201);
    expectError(await c("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "bad" } } }), 422, "invalid_payload");
    expect((await c("GET", "/api/health", { token: null })).status).toBe(200);
    expect([made, disposed]).toEqual([3, 3]);
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
  });

  it("refuses a bad JOBS_MAX_BODY_BYTES when the app is created", () => {
    expect(() => createApp({ jobs, env: { JOBS_MAX_BODY_BYTES: "1MB" } })).toThrow(/JOBS_MAX_BODY_BYTES must be a positive integer/);
  });

  it("takes the tick options from a function of the request", async () => {
    let asked = 0;
    const c = caller(createApp({ jobs, env: { CRON_SECRET }, tickOptions: () => (asked++, { budgetMs: 1_000, concurrency: 1 }) }));
    expect((await c("GET", "/api/tick", { token: CRON_SECRET })).status).toBe(200);
    expect(asked).toBe(1);
  });
});
