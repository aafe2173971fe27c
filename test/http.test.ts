// The HTTP API: authentication, and enqueueing over POST /api/jobs.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createApp } from "../src/http/index.js";
import { API_TOKENS, caller, chunkedBody, CRON_SECRET, NEW_TOKEN, OLD_TOKEN } from "./http-support.js";
import { echo, expectError, fails, httpFixture, sendEmail } from "./support/http-fixture.js";

const { h, jobs, kicks, call, count, reset } = await httpFixture("http");

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

  it("takes a secret with inner spaces as a platform cron sends it", async () => {
    const secret = "correct horse battery staple";
    const app = createApp({ jobs, env: { CRON_SECRET: secret, JOBS_API_TOKEN: API_TOKENS } });
    const tick = await app.request("/api/tick", { headers: { authorization: `Bearer ${secret}` } });
    expect(tick.status).toBe(200);
    const cut = await app.request("/api/tick", { headers: { authorization: "Bearer correct horse" } });
    expect(cut.status).toBe(401);
    expect(await cut.json()).toMatchObject({ error: { code: "unauthorized", details: { reason: "invalid_token" } } });
  });

  it("keeps the cron secret and the API token apart", async () => {
    await reset();
    expectError(await call("POST", "/api/jobs", { token: CRON_SECRET, json: { job: "send-email", payload: { to: "a@b.co" } } }), 401, "unauthorized");
    expect(await count()).toBe(0);
    expectError(await call("POST", "/api/tick", { token: NEW_TOKEN }), 401, "unauthorized");
    expectError(await call("GET", "/api/tick", { token: null }), 401, "unauthorized");
    // A HEAD would be answered by the GET route: it must not run a tick.
    const head = await call("HEAD", "/api/tick", { token: CRON_SECRET });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("GET, POST");
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

  it("is closed, and says why, when a token or the cron secret is shorter than 16 characters (guessed in seconds)", async () => {
    const short = caller(createApp({ jobs, env: { JOBS_API_TOKEN: `zqx,${API_TOKENS}`, CRON_SECRET: "s3cret-15-chars" } }));
    for (const token of ["zqx", API_TOKENS.split(",")[0]!]) {
      const r = await short("GET", "/api/stats", { token });
      expectError(r, 401, "unauthorized");
      expect(r.body.error).toMatchObject({ message: expect.stringContaining("JOBS_API_TOKEN holds a value shorter than 16 characters"), details: { reason: "too_short" } });
    }
    const t = await short("GET", "/api/tick", { token: "s3cret-15-chars" });
    expectError(t, 401, "unauthorized");
    expect(t.body.error.message).toContain("CRON_SECRET holds a value shorter than 16 characters");
    const long = caller(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET: "s3cret-16-chars!" } }));
    expect((await long("GET", "/api/tick", { token: "s3cret-16-chars!" })).status).toBe(200);
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

  it("kicks for a debounce that makes the queued job due now, and not for one that moves it later", async () => {
    await reset();
    const send = (delayMs: number) => call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, debounce: { key: "k", delayMs } } });
    expect((await send(60_000)).status).toBe(201);
    const moved = await send(60_000);
    // Nothing new stored: 200, as for a duplicate (it answered 201, as if created).
    expect([moved.status, moved.body]).toMatchObject([200, { deduplicated: false, debounced: true }]);
    const batch = await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "a@b.co" }, debounce: { key: "k", delayMs: 60_000 } }] });
    expect([batch.status, batch.body.items]).toMatchObject([200, [{ id: moved.body.id, debounced: true }]]);
    // Before: a debounce was never due now, so a running tick was not woken and no tick was kicked for it.
    const now = await send(0);
    expect(now.body).toMatchObject({ id: moved.body.id, debounced: true });
    expect(kicks.map((k) => k.dueNow)).toEqual([false, false, false, true]);
    expect(await count()).toBe(1);
  });

  it("kicks for a delay under half a millisecond: it is stored rounded, due now (the job waited for the cron)", async () => {
    await reset();
    const plain = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 0.4 } });
    const debounced = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, debounce: { key: "d", delayMs: 0.4 } } });
    const later = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "a@b.co" }, delayMs: 0.6 } });
    expect([plain.status, debounced.status, later.status]).toEqual([201, 201, 201]);
    const due = await h.db.query<{ id: string; due: boolean }>(`SELECT id, run_at <= now() AS due FROM jobs_queue`);
    const dueById = Object.fromEntries(due.rows.map((r) => [r.id, r.due]));
    expect([dueById[plain.body.id], dueById[debounced.body.id]]).toEqual([true, true]);
    expect(kicks.map((k) => k.dueNow)).toEqual([true, true, false]);
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
    expect(envelope.body.error.details).toMatchObject({ index: 1, field: "runat" });
    expect(envelope.body.error.message).toContain('unknown option "runat"');
    const nested = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "c@d.co" }, debounce: { key: "k", delayMs: 1, delay: 2 } } });
    expect(nested.body.error.details).toMatchObject({ field: "debounce.delay" });
    const typed = await call("POST", "/api/jobs", { json: { job: "send-email", payload: { to: "c@d.co" }, delayMs: "soon" } });
    expect(typed.body.error.details).toMatchObject({ field: "delayMs" });
    // An empty batch stores nothing, as the library's enqueueMany([]) (it was a 422).
    expect(await call("POST", "/api/jobs", { json: [] })).toMatchObject({ status: 200, body: { items: [] } });
    expectError(await call("POST", "/api/jobs", { json: [{ job: "send-email", payload: { to: "a@b.co" } }], headers: { "idempotency-key": "k" } }), 422, "invalid_options");
    expect(await count()).toBe(2);
  });

  it("answers a mistake as the library does: the same code, message, field and item (the envelope's own check said less, and a later item's mistake first)", async () => {
    await reset();
    const cases: unknown[][] = [
      // A payload the schema refuses at index 0, an unknown field at index 1: the first item's mistake.
      [{ job: "send-email", payload: { to: "not an email" } }, { job: "send-email", payload: { to: "a@b.co" }, runat: "x" }],
      [{ job: "send-email", payload: { to: "a@b.co" }, priority: "5" }],
      [{ job: "send-email", payload: { to: "a@b.co" }, debounce: { key: "k", delayMs: "soon" } }],
      [{ payload: { to: "a@b.co" } }],
      [{ job: 5, payload: { to: "a@b.co" } }],
      [{ job: "send-email", payload: { to: "a@b.co" }, maxAttempts: 0 }],
    ];
    for (const items of cases) {
      const res = await call("POST", "/api/jobs", { json: items });
      const lib = await jobs.enqueueMany(items as never).then(() => undefined, (e: unknown) => e as { code: string; message: string; details: Record<string, unknown> });
      expect(lib, JSON.stringify(items)).toBeDefined();
      expect([res.body.error.code, res.body.error.message, res.body.error.details.index, res.body.error.details.field], JSON.stringify(items))
        .toEqual([lib!.code, lib!.message, lib!.details.index, lib!.details.field]);
    }
    expect(await count()).toBe(0);
  });

  it("answers every malformed request with its code and stores nothing", async () => {
    await reset();
    const cases: Array<[Parameters<typeof call>[2], number, string]> = [
      [{ raw: "{not json", headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: "", headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: new Uint8Array([0x7b, 0xff, 0x7d]), headers: { "content-type": "application/json" } }, 400, "malformed_json"],
      [{ raw: '{"job":"send-email","payload":{"to":"a@b.co"}}', headers: { "content-type": "text/plain" } }, 415, "unsupported_media_type"],
      [{ raw: '{"job":"send-email","payload":{"to":"a@b.co"}}' }, 415, "unsupported_media_type"],
      // A compressed body: the type we do not take (it was 400 "not valid UTF-8"), and so is a plain one said to be compressed.
      [{ raw: new Uint8Array(gzipSync('{"job":"send-email","payload":{"to":"a@b.co"}}')), headers: { "content-type": "application/json", "content-encoding": "gzip" } }, 415, "unsupported_media_type"],
      [{ raw: '{"job":"send-email","payload":{"to":"a@b.co"}}', headers: { "content-type": "application/json", "content-encoding": "br" } }, 415, "unsupported_media_type"],
      // An empty body is no body, whatever its type (Node hands an empty stream over for a POST without one).
      [{ raw: chunkedBody(0, 1) }, 400, "malformed_json"],
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
    const refused = await call("POST", "/api/jobs", { raw: big, headers: { "content-type": "application/json" } });
    expectError(refused, 413, "payload_too_large");
    // It names the setting: the payload's own limit (JOBS_MAX_PAYLOAD_BYTES) is another, and raising that alone left this one.
    expect(refused.body.error.message).toMatch(/^the request body is larger than \d+ bytes \(JOBS_MAX_BODY_BYTES\)$/);
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
