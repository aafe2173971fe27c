// A wrong kick setting fails every request the way any wrong setting does: the variable named in the log,
// 500 to the caller and nothing enqueued. Before, JOBS_KICK broke the whole Edge function at start-up (and
// every Worker request with a bare exception), and a malformed JOBS_KICK_URL let the API take jobs that the
// cron's tick, failing on it, would never run.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { cloudflareWorker } from "../src/platform/cloudflare.js";
import { vercelApi } from "../src/platform/vercel.js";
import { vercelTick } from "../src/platform/vercel-tick.js";
import { tickAnswered } from "../src/platform/kick.js";
import { tickRequest } from "../src/http/tick-request.js";
import { harness } from "./support/harness.js";
import { type NeonHttp, startNeonHttp } from "./support/neon-http.js";

const h = await harness("deploy_settings");
const job = defineJob({ name: "note", schema: z.object({ n: z.number() }), handler: () => {} });
const TOKEN = "token-settings-0123456789";
let standIn: NeonHttp;
beforeAll(async () => {
  standIn = await startNeonHttp();
});
afterAll(async () => {
  await standIn?.close();
});

const queued = async () => (await h.rows<{ n: number }>("SELECT count(*)::int AS n FROM jobs_queue"))[0]!.n;
const enqueue = { method: "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, body: JSON.stringify({ job: "note", payload: { n: 1 } }) };
const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} };

describe("wrong kick settings", () => {
  it("JOBS_KICK, JOBS_KICK_URL and JOBS_KICK_BUDGET are read at each request, as the other settings are", async () => {
    const env = (extra: Record<string, string>) => ({ DATABASE_URL: h.url, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: standIn.endpoint, JOBS_KICK: "off", ...extra });
    const answers: Array<[string, number, number]> = [];
    const extras: Array<Record<string, string>> = [{}, { JOBS_KICK: "maybe" }, { JOBS_KICK_URL: "my-app.vercel.app/api/tick" }, { JOBS_KICK_BUDGET: "0" }];
    for (const extra of extras) {
      const vercel = vercelApi({ jobs: [job] }, { env: env(extra) });
      const before = await queued();
      const response = await vercel(new Request("https://app.example/api/jobs", enqueue));
      answers.push([`vercel ${JSON.stringify(extra)}`, response.status, (await queued()) - before]);
      const worker = cloudflareWorker({ jobs: [job] });
      const workerResponse = await worker.fetch(new Request("https://app.example/api/jobs", enqueue), env(extra), ctx);
      expect(workerResponse.headers.get("content-type")).toMatch(/json/);
      answers.push([`worker ${JSON.stringify(extra)}`, workerResponse.status, (await queued()) - before - (response.status === 201 ? 1 : 0)]);
    }
    // A path the rewrite sends to the API function instead of the tick function is refused there: no tick in the Edge runtime.
    const vercel = vercelApi({ jobs: [job] }, { env: { ...env({}), CRON_SECRET: "cron-secret-0123456789" } });
    for (const path of ["/api/tick/", "/api//tick"]) {
      const response = await vercel(new Request(`https://app.example${path}`, { headers: { authorization: "Bearer cron-secret-0123456789" } }));
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: "no_route" } });
      // So is a start of a tick sent there (a JOBS_KICK_URL with a trailing slash): it was answered 202, and started nothing.
      const start = await vercel(tickRequest(`https://app.example${path}`, "cron-secret-0123456789", { async: true, kick: true }));
      expect(start.status, path).toBe(404);
      await expect(tickAnswered(start)).rejects.toThrow(/answered 404: .*no_route/);
    }
    expect(answers).toEqual([
      ["vercel {}", 201, 1],
      ["worker {}", 201, 1],
      ['vercel {"JOBS_KICK":"maybe"}', 500, 0],
      ['worker {"JOBS_KICK":"maybe"}', 500, 0],
      ['vercel {"JOBS_KICK_URL":"my-app.vercel.app/api/tick"}', 500, 0],
      ['worker {"JOBS_KICK_URL":"my-app.vercel.app/api/tick"}', 500, 0],
      // Before: 201, and every kick then failed in the background, the jobs waiting for the cron.
      ['vercel {"JOBS_KICK_BUDGET":"0"}', 500, 0],
      ['worker {"JOBS_KICK_BUDGET":"0"}', 500, 0],
    ]);
  });
});

describe("a DATABASE_URL that is not Neon's, on the edge", () => {
  it("is refused as misconfigured before anything is sent: Neon's HTTP driver would send its password to api. and the host's domain", async () => {
    const sent: string[] = [];
    const fetchSpy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      sent.push(input instanceof Request ? input.url : String(input));
      throw new TypeError("fetch failed (intercepted)");
    });
    try {
      const answers: Array<[string, number, string]> = [];
      for (const host of ["my-pg.fly.dev", "pg.internal.example.com", "ep-cool-1234.us-east-2.aws.neon.tech"]) {
        const env = { DATABASE_URL: `postgres://app:S3CRET@${host}:5432/app`, JOBS_API_TOKEN: TOKEN, JOBS_KICK: "off" };
        const vercel = vercelApi({ jobs: [job] }, { env });
        const response = await vercel(new Request("https://app.example/api/jobs", enqueue));
        answers.push([host, response.status, ((await response.json()) as { error?: { code: string } }).error?.code ?? "none"]);
        // The open health check answers any failure as the database not answering.
        expect((await vercel(new Request("https://app.example/api/health"))).status).toBe(503);
        const worker = cloudflareWorker({ jobs: [job] });
        const fromWorker = await worker.fetch(new Request("https://app.example/api/jobs", enqueue), env, ctx);
        answers.push([`worker ${host}`, fromWorker.status, ((await fromWorker.json()) as { error?: { code: string } }).error?.code ?? "none"]);
      }
      expect(answers).toEqual([
        ["my-pg.fly.dev", 500, "internal"],
        ["worker my-pg.fly.dev", 500, "internal"],
        ["pg.internal.example.com", 500, "internal"],
        ["worker pg.internal.example.com", 500, "internal"],
        // Neon's own endpoint is used (here it cannot be reached).
        ["ep-cool-1234.us-east-2.aws.neon.tech", 503, "unavailable"],
        ["worker ep-cool-1234.us-east-2.aws.neon.tech", 503, "unavailable"],
      ]);
      expect(sent.filter((url) => new URL(url).hostname !== "api.us-east-2.aws.neon.tech")).toEqual([]);
      expect(sent.length).toBeGreaterThan(0);
    } finally {
      fetchSpy.mockRestore();
    }
  });
});

describe("a database down behind Neon's HTTP endpoint", () => {
  it("is 503 unavailable, as over the WebSocket transport (the endpoint answers 400 with no SQLSTATE for a connection it could not make; it was a 500)", async () => {
    const down = "postgres://postgres:postgres@127.0.0.1:1/nowhere";
    const env = { DATABASE_URL: down, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: standIn.endpoint, JOBS_KICK: "off" };
    const vercel = vercelApi({ jobs: [job] }, { env });
    const worker = cloudflareWorker({ jobs: [job] });
    for (const handle of [vercel, (r: Request) => worker.fetch(r, env, ctx)]) {
      for (const request of [new Request("https://app.example/api/jobs", enqueue), new Request("https://app.example/api/jobs", { headers: enqueue.headers }), new Request("https://app.example/api/stats", { headers: enqueue.headers })]) {
        const response = await handle(request);
        expect([request.method, new URL(request.url).pathname, response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([request.method, new URL(request.url).pathname, 503, "unavailable"]);
      }
    }
  });
});

describe("settings a deployment may get in other shapes", () => {
  it("a wrong JOBS_MAX_BODY_BYTES fails each request as a wrong setting does (the health check says misconfigured); it took every function down at its start", async () => {
    const env = { DATABASE_URL: h.url, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: standIn.endpoint, JOBS_KICK: "off", JOBS_MAX_BODY_BYTES: "1mb", CRON_SECRET: "cron-secret-0123456789" };
    const before = await queued();
    const worker = cloudflareWorker({ jobs: [job] });
    const handlers: Array<[string, (r: Request) => Promise<Response>]> = [
      ["vercel api", vercelApi({ jobs: [job] }, { env })],
      ["vercel tick", vercelTick({ jobs: [job] }, { env }).POST],
      ["worker", (r) => worker.fetch(r, env, ctx)],
    ];
    const answers: Array<[string, string, number, string]> = [];
    for (const [name, handle] of handlers) {
      const requests: Array<[string, Request]> = [
        ["enqueue", new Request("https://app.example/api/jobs", enqueue)],
        ["tick", new Request("https://app.example/api/tick", { method: "POST", headers: { authorization: "Bearer cron-secret-0123456789" } })],
        ["health", new Request("https://app.example/api/health")],
      ];
      for (const [what, request] of requests) {
        if (name === "vercel tick" && what !== "tick") continue;
        const response = await handle(request);
        const body = (await response.json()) as { error?: { code: string; message: string } };
        answers.push([name, what, response.status, body.error?.code ?? "none"]);
        if (what === "health") expect(body.error?.message).toContain("misconfigured");
      }
    }
    expect(answers).toEqual([
      ["vercel api", "enqueue", 500, "internal"],
      ["vercel api", "tick", 500, "internal"],
      ["vercel api", "health", 503, "unavailable"],
      ["vercel tick", "tick", 500, "internal"],
      ["worker", "enqueue", 500, "internal"],
      ["worker", "tick", 500, "internal"],
      ["worker", "health", 503, "unavailable"],
    ]);
    expect(await queued()).toBe(before);
  });

  it("a Worker's vars written as TOML numbers and booleans are read as the text they stand for; they were ignored", async () => {
    const env = { DATABASE_URL: h.url, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: standIn.endpoint, JOBS_KICK: false, JOBS_MAX_BODY_BYTES: 16 };
    const worker = cloudflareWorker({ jobs: [job] });
    const before = await queued();
    // 16 bytes: this enqueue's body is larger. Before, the limit was the default and the job was stored.
    const response = await worker.fetch(new Request("https://app.example/api/jobs", enqueue), env, ctx);
    expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([413, "payload_too_large"]);
    // A worker is made once per isolate, for its env.
    const other = cloudflareWorker({ jobs: [job] });
    const refused = await other.fetch(new Request("https://app.example/api/jobs", enqueue), { ...env, JOBS_MAX_BODY_BYTES: 1_048_576, JOBS_CONCURRENCY: 0 }, ctx);
    expect(refused.status).toBe(500);
    expect(await queued()).toBe(before);
  });
});

describe("what the database refuses for the deployment's part", () => {
  it("a DATABASE_URL naming a database or role the server refuses is a misconfiguration, on the API and the health check (it was an internal error, and the database 'not answering')", async () => {
    const base = new URL(h.url);
    const wrong = [
      ["no such database", Object.assign(new URL(base), { pathname: "/pgtick_no_such_database" }).href, "DATABASE_URL's database does not exist"],
      ["no such role", Object.assign(new URL(base), { username: "pgtick_no_such_role" }).href, "DATABASE_URL's role or password is refused"],
    ] as const;
    for (const [what, url, reason] of wrong) {
      const vercel = vercelApi({ jobs: [job] }, { env: { DATABASE_URL: url, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: standIn.endpoint, JOBS_KICK: "off" } });
      const enqueued = await vercel(new Request("https://app.example/api/jobs", enqueue));
      expect([what, enqueued.status, await enqueued.json()]).toEqual([what, 500, { error: { code: "internal", message: `the server is misconfigured (${reason}); see its logs` } }]);
      const health = await vercel(new Request("https://app.example/api/health"));
      expect([what, health.status, ((await health.json()) as { error: { message: string } }).error.message]).toEqual([what, 503, `the server is misconfigured (${reason}); see its logs`]);
    }
  });

  it("a statement larger than Neon's HTTP endpoint takes is 413 to the caller, and stores nothing (it was a 500)", async () => {
    const small = await startNeonHttp({ maxRequestBytes: 64_000 });
    try {
      const vercel = vercelApi({ jobs: [job] }, { env: { DATABASE_URL: h.url, JOBS_API_TOKEN: TOKEN, NEON_LOCAL_HTTP: small.endpoint, JOBS_KICK: "off" } });
      const before = await queued();
      // Within the API's body limit (1 MiB), past the endpoint's (here 64 kB; Neon's is 10 MiB).
      const big = JSON.stringify(Array.from({ length: 1_000 }, (_, n) => ({ job: "note", payload: { n }, correlationId: `c-${n}-${"x".repeat(80)}` })));
      const response = await vercel(new Request("https://app.example/api/jobs", { ...enqueue, body: big }));
      expect([response.status, ((await response.json()) as { error: { code: string } }).error.code]).toEqual([413, "payload_too_large"]);
      expect(await queued()).toBe(before);
    } finally {
      await small.close();
    }
  });
});

describe("a variable pgtick does not know", () => {
  it("is named in a warning when a platform's app is made, as the CLI and npm run dev name it (it was ignored without a word)", () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    try {
      vercelApi({ jobs: [job] }, { env: { DATABASE_URL: h.url, JOBS_API_TOKEN: TOKEN, JOBS_CONCURENCY: "5", JOBS_KICK: "off" } });
    } finally {
      spy.mockRestore();
    }
    expect(lines.map((l) => JSON.parse(l) as { level: string; msg: string })).toEqual([
      expect.objectContaining({ level: "warn", msg: expect.stringMatching(/^JOBS_CONCURENCY is no setting a deployment reads; it is ignored/) }),
    ]);
  });

  it("is named by a Worker's cron too, once per isolate (a Worker that only runs from its cron builds no app, and said nothing)", async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    const worker = cloudflareWorker({ jobs: [job] });
    // Its tick fails here (no database at that port); the warning comes first.
    const bindings = { DATABASE_URL: "postgres://u:p@127.0.0.1:1/db", JOBS_CRON_TYPO: "1", JOBS_PLATFORM_LIMIT: "2s" };
    const ctx = { waitUntil: () => {}, passThroughOnException: () => {} } as never;
    try {
      for (let i = 0; i < 2; i++) await worker.scheduled({} as never, bindings, ctx).catch(() => {});
    } finally {
      spy.mockRestore();
    }
    expect(lines.filter((l) => l.includes("JOBS_CRON_TYPO is no setting a deployment reads"))).toHaveLength(1);
  });
});
