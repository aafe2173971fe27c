// Every route of the API and the dashboard, the migration and the tick over `neon()`
// to the local SQL-over-HTTP endpoint, which, as Neon's proxy, parses each query as
// one statement: a string of several statements that node-postgres would run over
// TCP fails there with 42601, so this is where such a string would show.
import { neon, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, defineSchedule, fromNeonHttp, PermanentJobError, silentLogger } from "../src/index.js";
import { API_TOKENS, CRON_SECRET, caller } from "./http-support.js";
import { PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";
import { type NeonHttp, startNeonHttp } from "./support/neon-http.js";

const h = await harness("neon_routes");
let standIn: NeonHttp;
beforeAll(async () => {
  standIn = await startNeonHttp();
  neonConfig.fetchEndpoint = standIn.endpoint;
});
afterAll(async () => {
  await standIn?.close();
});

const note = defineJob({ name: "note", schema: z.object({ text: z.string() }), handler: () => {} });
const dies = defineJob({ name: "dies", schema: z.object({ n: z.number() }), handler: () => Promise.reject(new PermanentJobError("no")) });
// Its own tables, migrated over neon() too.
const jobs = createJobs({
  db: fromNeonHttp(neon(h.url)),
  jobs: [note, dies],
  schedules: [defineSchedule({ name: "hourly", cron: "0 * * * *", job: "note", payload: { text: "hourly" } })],
  settings: { tablePrefix: "edge_" },
  logger: silentLogger,
});
const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET, DASHBOARD_PASSWORD: PASSWORD } });
const call = caller(app);

const ORIGIN = "http://dash.test";
const dashboardSession = async () => {
  const send = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}/dashboard${path}`, init);
  const login = await send("/login", {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: PASSWORD, next: "/dashboard/" }),
  });
  expect(login.status).toBe(303);
  const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await send("/jobs", { headers: { cookie } })).text())![1]!;
  return {
    get: async (path: string) => (await send(path, { headers: { cookie } })).status,
    post: async (path: string, fields: Record<string, string> = {}) =>
      (
        await send(path, {
          method: "POST",
          headers: { cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ _csrf: csrf, ...fields }),
        })
      ).status,
  };
};

describe("the edge's statements over neon()", () => {
  it("migrates, serves every API route and runs a tick, one statement per query", async () => {
    await jobs.migrate();
    await jobs.migrate();
    const a = await call("POST", "/api/jobs", { json: { job: "note", payload: { text: "a" }, delayMs: 600_000, idempotencyKey: "k" } });
    expect(a.status).toBe(201);
    expect((await call("POST", "/api/jobs", { json: { job: "note", payload: { text: "again" }, idempotencyKey: "k" } })).body).toEqual({ id: a.body.id, deduplicated: true });
    const batch = await call("POST", "/api/jobs", { json: [1, 2, 3, 4].map((n) => ({ job: "dies", payload: { n } })) });
    expect(batch.status).toBe(201);
    expect((await call("GET", "/api/jobs?job=note&status=queued&limit=1")).body.items).toHaveLength(1);
    expect((await call("GET", `/api/jobs/${a.body.id}`)).status).toBe(200);
    expect((await call("DELETE", `/api/jobs/${a.body.id}`)).body).toEqual({ id: a.body.id, cancelled: true });

    const tick = await call("POST", "/api/tick", { token: CRON_SECRET });
    expect(tick.status).toBe(200);
    expect(tick.body).toMatchObject({ deadLettered: 4 });
    const [d1, d2, d3, d4] = (await call("GET", "/api/dead-letters?job=dies&reason=permanent")).body.items.map((d: { id: string }) => d.id);
    expect((await call("GET", `/api/dead-letters/${d1}`)).body).toMatchObject({ id: d1, reason: "permanent" });
    expect((await call("POST", `/api/dead-letters/${d1}/replay`)).status).toBe(200);
    expect((await call("POST", `/api/dead-letters/${d2}/replay`, { json: { payload: { n: 20 } } })).status).toBe(200);
    expect((await call("POST", "/api/dead-letters/replay", { json: { ids: [d3] } })).body).toMatchObject({ replayed: [d3] });
    expect((await call("POST", "/api/dead-letters/replay", { json: { job: "dies", limit: 10 } })).status).toBe(200);
    expect((await call("GET", "/api/dead-letters")).body.items).toEqual([]);
    expect((await call("POST", "/api/tick", { token: CRON_SECRET })).body).toMatchObject({ deadLettered: 4 });
    expect((await call("DELETE", `/api/dead-letters/${d4}`)).body).toEqual({ id: d4, discarded: true });

    expect((await call("GET", "/api/schedules?next=2")).body.items).toEqual([expect.objectContaining({ name: "hourly", paused: false })]);
    expect((await call("POST", "/api/schedules/hourly/pause")).body).toMatchObject({ paused: true });
    expect((await call("POST", "/api/schedules/hourly/resume")).body).toMatchObject({ paused: false });
    expect((await call("POST", "/api/schedules/hourly/run")).status).toBe(201);
    expect((await call("GET", "/api/stats")).status).toBe(200);
    expect((await call("GET", "/api/health", { token: null })).body).toMatchObject({ ok: true });
    expect((await call("GET", "/api/openapi.json")).status).toBe(200);
    expect(standIn.statements).toBeGreaterThan(30);
  });

  it("serves every dashboard page and action", async () => {
    const dash = await dashboardSession();
    const queued = (await call("POST", "/api/jobs", { json: { job: "note", payload: { text: "dash" }, delayMs: 600_000 } })).body.id as string;
    await call("POST", "/api/jobs", { json: [{ job: "dies", payload: { n: 1 } }, { job: "dies", payload: { n: 2 } }, { job: "dies", payload: { n: 3 } }] });
    await call("POST", "/api/tick", { token: CRON_SECRET });
    const dead = (await call("GET", "/api/dead-letters?job=dies")).body.items.map((d: { id: string }) => d.id) as string[];
    expect(dead.length).toBeGreaterThanOrEqual(3);
    for (const path of ["/", "/jobs", "/jobs?job=note&status=queued", `/jobs/${queued}`, "/dead-letters", "/dead-letters?reason=permanent", `/dead-letters/${dead[0]}`, "/schedules"]) {
      expect([path, await dash.get(path)]).toEqual([path, 200]);
    }
    expect(await dash.post(`/jobs/${queued}/cancel`)).toBe(303);
    expect(await dash.post(`/dead-letters/${dead[0]}/replay`)).toBe(303);
    expect(await dash.post(`/dead-letters/${dead[1]}/replay`, { payload: '{"n": 5}' })).toBe(303);
    expect(await dash.post("/dead-letters/discard", { id: dead[2]! })).toBe(303);
    expect(await dash.post("/dead-letters/replay-all", { job: "dies", reason: "" })).toBe(303);
    for (const action of ["pause", "resume", "run"]) expect(await dash.post(`/schedules/hourly/${action}`)).toBe(303);
  });
});
