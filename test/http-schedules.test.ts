import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, defineSchedule, silentLogger } from "../src/index.js";
import { API_TOKENS, caller } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("http_sched");

const report = defineJob({ name: "report", schema: z.object({ kind: z.string() }), handler: () => {} });
const jobs = createJobs({
  db: h.main,
  jobs: [report],
  logger: silentLogger,
  schedules: [
    defineSchedule({ name: "nightly-report", cron: "30 2 * * *", timezone: "Europe/Berlin", job: "report", payload: { kind: "nightly" } }),
    defineSchedule({ name: "hourly/ns:x", cron: "0 * * * *", job: "report", payload: { kind: "hourly" } }),
  ],
});
const kicks: Array<{ ids: string[]; dueNow: boolean }> = [];
const call = caller(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS }, onEnqueued: (info) => void kicks.push(info) }));

describe("schedules API", () => {
  it("lists the schedules defined in code with their next runs, by name, a page at a time", async () => {
    const r = await call("GET", "/api/schedules?next=3");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ nextCursor: null });
    expect(r.body.items.map((s: { name: string }) => s.name)).toEqual(["hourly/ns:x", "nightly-report"]);
    const first = await call("GET", "/api/schedules?limit=1&next=0");
    expect(first.body.items).toMatchObject([{ name: "hourly/ns:x", nextRuns: [] }]);
    const second = await call("GET", `/api/schedules?limit=1&cursor=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ items: [{ name: "nightly-report" }], nextCursor: null });
    expect((await call("GET", "/api/schedules?limit=500&next=100")).body.error).toMatchObject({ code: "invalid_options", details: { field: "next" } });
    const nightly = r.body.items[1];
    expect(nightly).toMatchObject({ cron: "30 2 * * *", timezone: "Europe/Berlin", job: "report", payload: { kind: "nightly" }, paused: false });
    expect(nightly.nextRuns).toHaveLength(3);
    expect(typeof nightly.description).toBe("string");
    for (const q of ["next=abc", "next=101", "nxt=1", "limit=0", "cursor=x"]) expect((await call("GET", `/api/schedules?${q}`)).body.error.code).toBe("invalid_options");
  });

  it("pauses and resumes a schedule (names with / and : go URL-encoded)", async () => {
    const name = encodeURIComponent("hourly/ns:x");
    const paused = await call("POST", `/api/schedules/${name}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ name: "hourly/ns:x", paused: true, nextRuns: [] });
    expect((await call("GET", "/api/schedules")).body.items[0].paused).toBe(true);
    const resumed = await call("POST", `/api/schedules/${name}/resume`);
    expect(resumed.body).toMatchObject({ name: "hourly/ns:x", paused: false });
    expect(resumed.body.nextRuns.length).toBeGreaterThan(0);
  });

  it("runs a schedule now: 201 with the queued job's id, and kicks", async () => {
    const r = await call("POST", "/api/schedules/nightly-report/run");
    expect(r.status).toBe(201);
    const job = await call("GET", `/api/jobs/${r.body.id}`);
    expect(job.body).toMatchObject({ job: "report", status: "queued", payload: { kind: "nightly" } });
    expect(kicks).toEqual([{ ids: [r.body.id], dueNow: true }]);
  });

  it("runs it once for a request sent twice with one key (header or body): 200 with the same job, no second kick", async () => {
    kicks.length = 0;
    const first = await call("POST", "/api/schedules/nightly-report/run", { headers: { "Idempotency-Key": "retry-1" } });
    const again = await call("POST", "/api/schedules/nightly-report/run", { json: { idempotencyKey: "retry-1" } });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual({ id: first.body.id, deduplicated: true });
    expect(kicks).toHaveLength(1);
    expect((await call("POST", "/api/schedules/nightly-report/run", { json: { key: "x" } })).status).toBe(422);
  });

  it("answers 404 not_found for a schedule not defined in code, and 405 for GET on an action", async () => {
    for (const action of ["pause", "resume", "run"]) {
      const r = await call("POST", `/api/schedules/nope/${action}`);
      expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 404, code: "not_found" });
    }
    expect((await call("GET", "/api/schedules/nightly-report/run")).status).toBe(405);
    expect((await call("POST", "/api/schedules/nightly-report/run", { token: null })).status).toBe(401);
  });
});
