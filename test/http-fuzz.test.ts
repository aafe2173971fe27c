// A seeded fuzz of the HTTP API (/api/*; the dashboard has its own tests): random and malformed methods, paths, query
// strings, headers and bodies. Every answer must be below 500, JSON in the one
// error shape when it is an error, and a failed request must change nothing.
// Reproduce a failure with FUZZ_SEED=<seed printed in the failure>.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { STATUS } from "../src/http/api-errors.js";
import { defineJob, PermanentJobError } from "../src/index.js";
import { API_TOKENS, CRON_SECRET, NEW_TOKEN, OLD_TOKEN } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("http_fuzz");
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_130);
const REQUESTS = Number(process.env.FUZZ_REQUESTS ?? 1_500);

const mail = defineJob({ name: "send-email", schema: z.object({ to: z.string().email(), n: z.number().int().optional() }), handler: () => {} });
const doc = defineJob({ name: "ns:doc/v1", schema: z.object({ title: z.string().max(50), tags: z.array(z.string()).max(5) }), handler: () => {} });
const dead = defineJob({ name: "dies", schema: z.object({}), handler: () => { throw new PermanentJobError("x"); } });
const jobs = h.make([mail, doc, dead], { maxPayloadBytes: 3_000 });
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET, JOBS_MAX_BODY_BYTES: "4096" }, tickOptions: { budgetMs: 2_000 } });

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
const prng = (seed: number) => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
};

const fingerprint = async () =>
  (
    await h.rows<{ f: string }>(
      `SELECT md5(coalesce((SELECT string_agg(q::text, '|' ORDER BY id) FROM jobs_queue q), '') || '#' ||
                  coalesce((SELECT string_agg(d::text, '|' ORDER BY id) FROM jobs_dead_letters d), '')) AS f`,
    )
  )[0]!.f;

describe("fuzz", () => {
  it(`answers ${REQUESTS} random and malformed requests without a 500, and failed ones change nothing (seed ${SEED})`, async () => {
    // Real rows, so ids in the fuzz sometimes hit something.
    const live = await jobs.enqueueMany([
      { job: "send-email", payload: { to: "a@b.co" }, delayMs: 3_600_000 },
      { job: "ns:doc/v1", payload: { title: "t", tags: [] }, delayMs: 3_600_000, idempotencyKey: "fuzz-key" },
    ]);
    const died = await jobs.enqueueMany([{ job: "dies", payload: {} }, { job: "dies", payload: {} }]);
    await jobs.tick({ budgetMs: 2_000 });
    const realIds = [...live, ...died].map((r) => r.id);

    const rand = prng(SEED);
    const int = (n: number) => Math.floor(rand() * n);
    const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
    const chance = (p: number) => rand() < p;

    const nasty = ["", " ", "'", '"', "\\", "'; DROP TABLE jobs_queue; --", "\u0000", "\ud800", "\udfff", "🎉", "日本語", "עברית", "%s%n", "${x}", "$1", "\u202e", "a".repeat(300), "null", "true", "0", "-1", "1e400", "__proto__", "constructor"];
    const randString = (): string => {
      if (chance(0.5)) return pick(nasty);
      const len = int(20);
      let s = "";
      for (let i = 0; i < len; i++) s += String.fromCharCode(chance(0.8) ? 32 + int(95) : int(0xffff));
      return s;
    };
    const randJson = (depth: number): unknown => {
      const kind = depth > 4 ? int(5) : int(7);
      switch (kind) {
        case 0: return null;
        case 1: return chance(0.5);
        case 2: return pick([0, -0, 1, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 1e308, Number.MAX_SAFE_INTEGER, 0.1]);
        case 3: case 4: return randString();
        case 5: return Array.from({ length: int(4) }, () => randJson(depth + 1));
        default: return Object.fromEntries(Array.from({ length: int(4) }, () => [randString(), randJson(depth + 1)]));
      }
    };
    const jobNames = ["send-email", "ns:doc/v1", "dies", "nope", "", "SEND-EMAIL", "send-email ", "ns:doc/v1/../x"];
    const envelope = (): Record<string, unknown> => {
      const e: Record<string, unknown> = { job: chance(0.8) ? pick(jobNames) : randJson(0), payload: chance(0.3) ? { to: pick(["a@b.co", "bad", randString()]) } : randJson(0) };
      const fields: Record<string, () => unknown> = {
        runAt: () => pick([new Date().toISOString(), "2024-02-30T00:00:00Z", "yesterday", "+275760-09-13T00:00:00.000Z", "-000001-01-01T00:00:00Z", randString(), 5]),
        delayMs: () => pick([-1, 0, 1e13, 1e14, 1.5, NaN, "10", randJson(0)]),
        idempotencyKey: () => pick([randString(), "fuzz-key", "", 5, "k".repeat(256)]),
        maxAttempts: () => pick([0, 1, 1001, 1.5, -1, "3", randJson(0)]),
        priority: () => pick([0, 2 ** 31, -(2 ** 31), 1.5, "1", randJson(0)]),
        correlationId: () => pick([randString(), "", 7]),
        [randString()]: () => randJson(0),
      };
      for (const [k, make] of Object.entries(fields)) if (chance(0.2)) e[k] = make();
      // Always one defect, so no fuzz request is a valid enqueue and any stored row is a bug.
      pick([
        () => (e.job = pick(["nope", "", 5, null])),
        () => (e.payload = pick([{ to: "not-an-email" }, { to: "a\u0000@b.co" }, { to: "\ud800@b.co" }, undefined, "x".repeat(3_100)])),
        () => (e.maxAttempts = pick([0, -5, 1.5, 5_000])),
        () => (e[`unknown_${int(9)}`] = 1),
        // Defects only the server's last checks (or PostgreSQL) can see: the schema passes.
        () => Object.assign(e, { job: "ns:doc/v1", payload: { title: pick(["\ud800", "a\u0000", "x\udfff"]), tags: [] } }),
        () => Object.assign(e, { job: "ns:doc/v1", payload: { title: "t", tags: [] }, [pick(["idempotencyKey", "correlationId", "runAt"])]: "k\ud800" }),
        () => Object.assign(e, { job: "send-email", payload: { to: "a@b.co" }, runAt: pick(["+275760-09-13T00:00:00.000Z", "-000001-01-01T00:00:00Z"]) }),
      ])();
      return e;
    };
    const rawBody = (): { body?: BodyInit; type?: string } => {
      const text = () => JSON.stringify(chance(0.5) ? envelope() : chance(0.5) ? Array.from({ length: 1 + int(3) }, envelope) : randJson(0)) ?? "null";
      const jsonType = chance(0.7)
        ? pick(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/vnd.api+json"])
        : pick(["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx", undefined]);
      switch (int(9)) {
        case 0: return { body: text().slice(0, int(40)), type: jsonType };
        case 1: return { body: new Uint8Array(Array.from({ length: int(64) }, () => int(256))), type: jsonType };
        case 2: return { body: "[".repeat(1 + int(2_000)) + "]".repeat(int(2_000)), type: jsonType };
        case 3: return { body: `{"job":"ns:doc/v1","payload":{"title":"${"x".repeat(51 + int(6_000))}","tags":[]}}`, type: jsonType };
        case 4: return { body: new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text())]), type: jsonType };
        case 5: {
          const bytes = new TextEncoder().encode(text().repeat(1 + int(60)));
          return { body: new ReadableStream({ start: (c) => { for (let i = 0; i < bytes.length; i += 512) c.enqueue(bytes.slice(i, i + 512)); c.close(); } }), type: jsonType };
        }
        case 6: return { body: pick(['{"payload":{"n":1}}', '{"ids":[]}', '{"ids":["x"],"job":"dies"}', '{"job":"dies","limit":0}', '{"payload":{"extra":1}}', '{"payload":null}']), type: jsonType };
        default: return { body: text(), type: jsonType };
      }
    };
    // A lone surrogate cannot be percent-encoded as UTF-8; send the bytes it would be (invalid UTF-8) instead.
    const enc = (s: string) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return "%ED%A0%80";
      }
    };
    const segment = () => pick([crypto.randomUUID(), pick(realIds), crypto.randomUUID().toUpperCase(), "not-a-uuid", "%00", "%ff%fe", "'%3B--", enc(randString()), "..", "replay", "a".repeat(int(3_000)), ""]);
    const path = () => {
      const base = pick([
        "/api/jobs", `/api/jobs/${segment()}`, "/api/dead-letters", `/api/dead-letters/${segment()}`, `/api/dead-letters/${segment()}/replay`,
        "/api/dead-letters/replay", "/api/schedules", `/api/schedules/${segment()}/${pick(["pause", "resume", "run", "x"])}`, "/api/stats",
        "/api/tick", "/api/health", "/api/openapi.json", `/api/${segment()}`, "/api", "/apix/jobs", "//api//jobs", "/api/jobs/", "/API/JOBS", `/${segment()}`,
      ]);
      if (!chance(0.4)) return base;
      const keys = ["job", "status", "limit", "cursor", "reason", "next", "jobs", "x"];
      const values = () => pick(["queued", "running", "dead", "0", "1", "500", "501", "-1", "1e3", "abc", "%00", "%ff", "W10", "eyJ4Ijp9", enc(randString()), ""]);
      return `${base}?${Array.from({ length: 1 + int(3) }, () => `${pick(keys)}=${values()}`).join("&")}`;
    };
    const latin1 = () => Array.from({ length: int(40) }, () => String.fromCharCode(pick([32 + int(95), 0xa0 + int(0x5f)]))).join("");

    let before = await fingerprint();
    const seen = new Map<number, number>();
    const codes = new Set<string>();
    for (let i = 0; i < REQUESTS; i++) {
      // Half the requests aim at the body parsers (enqueue, replay); the rest roam every route and method.
      const aimed = chance(0.5);
      const method = aimed ? "POST" : pick(["GET", "POST", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS", "PURGE"]);
      const headers = new Headers();
      const auth = int(20);
      if (auth < 17) headers.set("authorization", `Bearer ${pick([NEW_TOKEN, OLD_TOKEN])}`);
      else if (auth === 17) headers.set("authorization", pick([`Bearer ${CRON_SECRET}`, "Bearer", `Basic ${NEW_TOKEN}`, `Bearer ${NEW_TOKEN} extra`, latin1()]));
      else if (auth === 18) headers.set("authorization", `Bearer ${latin1()}`);
      let body: BodyInit | undefined;
      if (method !== "GET" && method !== "HEAD" && (aimed || chance(0.85))) {
        const b = rawBody();
        body = b.body;
        if (b.type !== undefined) headers.set("content-type", b.type);
      }
      if (chance(0.1)) headers.set("content-length", pick(["0", "5", "99999999", "abc", "-1"]));
      if (chance(0.15)) headers.set("idempotency-key", pick([latin1(), "fuzz-key", ""]));
      if (chance(0.05)) headers.set("transfer-encoding", "chunked");
      const target = aimed ? pick(["/api/jobs", "/api/jobs", "/api/jobs", `/api/dead-letters/${pick(realIds)}/replay`, "/api/dead-letters/replay"]) : path();
      const url = `http://localhost${target}`;
      const init = { method, headers, body, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit;
      let request: Request;
      try {
        request = new Request(url, init);
      } catch {
        continue; // the Request constructor refused it (a forbidden header value): nothing reached the app
      }
      const res = await app.fetch(request);
      const text = await res.text();
      const sent = typeof body === "string" ? body : body instanceof Uint8Array ? new TextDecoder().decode(body) : body ? "(stream)" : "";
      const where = `request #${i} (FUZZ_SEED=${SEED}): ${method} ${url.slice(0, 200)} ${JSON.stringify(sent.slice(0, 300))} -> ${res.status} ${text.slice(0, 300)}`;
      seen.set(res.status, (seen.get(res.status) ?? 0) + 1);
      expect(res.status, where).toBeLessThan(500);
      if (res.status >= 400 && method !== "HEAD") {
        const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
        expect(Object.keys(parsed), where).toEqual(["error"]);
        expect(STATUS[parsed.error!.code as keyof typeof STATUS], where).toBe(res.status);
        expect(typeof parsed.error!.message, where).toBe("string");
        codes.add(parsed.error!.code!);
      }
      // An empty batch is no defect: it stores nothing (200 { items: [] }), as enqueueMany([]) does.
      const emptyBatch = res.status === 200 && text === '{"items":[]}';
      if (method === "POST" && new URL(url).pathname === "/api/jobs" && !emptyBatch) expect(res.status, `${where}: a defective enqueue was accepted`).toBeGreaterThanOrEqual(400);
      const after = await fingerprint();
      if (emptyBatch) expect(after, `${where}: an empty batch changed the tables`).toBe(before);
      if (res.status >= 400) expect(after, `${where}: a failed request changed the tables`).toBe(before);
      before = after;
    }
    // Every request that could store was made defective: nothing new was enqueued.
    const stored = await h.rows<{ id: string }>(`SELECT id FROM jobs_queue UNION ALL SELECT id FROM jobs_dead_letters`);
    expect(stored.every((r) => realIds.includes(r.id))).toBe(true);
    if (process.env.FUZZ_VERBOSE) console.log(Object.fromEntries(seen), [...codes]);
    // The fuzz reached every kind of refusal, not just the front door.
    for (const code of ["malformed_json", "unsupported_media_type", "payload_too_large", "unknown_job", "not_found", "invalid_payload", "invalid_options", "unauthorized", "method_not_allowed"]) {
      expect([...codes], `the fuzz never produced ${code}`).toContain(code);
    }
    expect([...seen.keys()].every((s) => s < 500)).toBe(true);
  });
});
