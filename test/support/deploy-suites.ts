// The deploy adapter suites, run on each platform by its own test file: the same checks of
// health, auth, validation, the cron tick, the kick and fan-out, against the real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobs as exampleJobs, setup } from "../../functions/jobs.js";
import { requeueErrors } from "../../src/store/tick/requeue.js";
import { type Deployment, type Platform, TOKEN } from "./deploy-fixture.js";
import { harness, sleep } from "./harness.js";

/** The same checks on every platform; afterwards it prints the kick's enqueue-to-start times it measured. */
export const adapterSuite = (name: string, platform: Platform) => {
  const latencies: number[] = [];
  describe(`${name}: the shared adapter suite`, async () => {
    const h = await harness(`deploy_${name}`);
    await setup(h.db);
    const lib = h.make(exampleJobs);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: true, transport: "http" });
    }, 120_000);
    afterAll(async () => {
      await d?.settle();
      await d?.close();
    });
    const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const queued = () => h.rows("SELECT job_name, status FROM jobs_queue ORDER BY created_at");

    it("answers /api/health without a token", async () => {
      const response = await d.request("/api/health");
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ ok: true });
    });

    it("serves the OpenAPI document on Vercel; a Worker that did not ask for it answers no_route, saying how", async () => {
      const response = await d.request("/api/openapi.json", { headers: auth });
      if (name === "cloudflare") {
        expect(response.status).toBe(404);
        expect(await response.json()).toMatchObject({ error: { code: "no_route", message: expect.stringMatching(/openApi: openApiDocument/) } });
      } else {
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ openapi: "3.1.0" });
      }
    });

    it("refuses an enqueue without the API token and writes nothing", async () => {
      const response = await d.request("/api/jobs", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ job: "example.record", payload: { note: "x" } }) });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      expect(await queued()).toEqual([]);
    });

    it("refuses a payload that does not match the job's schema with 422 and writes nothing", async () => {
      const response = await d.request("/api/jobs", { method: "POST", headers: auth, body: JSON.stringify({ job: "example.record", payload: { note: 42 } }) });
      expect(response.status).toBe(422);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("invalid_payload");
      expect(await queued()).toEqual([]);
    });

    it("refuses /api/tick without CRON_SECRET, and an API token is not enough", async () => {
      expect((await d.request("/api/tick")).status).toBe(401);
      expect((await d.request("/api/tick", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
    });

    it("the cron tick runs a job, retries then dead-letters a failing one, and requeues one over budget before it ends", async () => {
      const ok = await lib.enqueue("example.record", { note: "from the cron" });
      const bad = await lib.enqueue("example.fail", { reason: "boom" });
      const slow = await lib.enqueue("example.sleep", { ms: 60_000 });
      await d.cron();
      expect(await h.rows("SELECT job_id::text, note, attempt FROM example_events")).toEqual([{ job_id: ok.id, note: "from the cron", attempt: 1 }]);
      // Back in the queue before the tick returned, its attempt counted.
      expect(await h.rows("SELECT status, attempt, last_error FROM jobs_queue WHERE id = $1", [slow.id])).toEqual([
        { status: "queued", attempt: 1, last_error: requeueErrors("deadline").error },
      ]);
      // The failure's retry (due 10 ms later) runs in this tick or the next, whichever claims it first.
      await d.cron();
      expect(await h.rows("SELECT id::text, attempts, reason, last_error FROM jobs_dead_letters")).toEqual([
        { id: bad.id, attempts: 2, reason: "exhausted", last_error: "boom" },
      ]);
      expect(await h.rows("SELECT sum(retried)::int AS retried, sum(dead_lettered)::int AS dead FROM jobs_metrics WHERE job_name = 'example.fail'")).toEqual([
        { retried: 1, dead: 1 },
      ]);
      expect(await h.rows("SELECT id::text, status, attempt FROM jobs_queue")).toEqual([{ id: slow.id, status: "queued", attempt: 2 }]);
      // What a deployment check sees: the health endpoint reports the cron's last tick.
      const health = (await (await d.request("/api/health")).json()) as { ok: boolean; lastTickAt: string | null };
      expect(health.ok).toBe(true);
      expect(Date.parse(health.lastTickAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
      await h.db.query("DELETE FROM jobs_queue");
    });

    it("an enqueue of a job due now starts it without waiting for the cron (the kick)", async () => {
      for (let i = 0; i < 5; i++) {
        const sent = Date.now();
        const response = await d.request("/api/jobs", { method: "POST", headers: auth, body: JSON.stringify({ job: "example.record", payload: { note: `kick ${i}` } }) });
        expect(response.status).toBe(201);
        const { id } = (await response.json()) as { id: string };
        let started: Date | undefined;
        while (!started) {
          const [row] = await h.rows<{ at: Date }>("SELECT at FROM example_events WHERE job_id = $1", [id]);
          started = row?.at;
          if (!started) await sleep(10);
        }
        latencies.push(started.getTime() - sent);
        await d.settle();
      }
      expect(await h.rows("SELECT note FROM example_events WHERE note LIKE 'kick%' ORDER BY at")).toEqual([0, 1, 2, 3, 4].map((i) => ({ note: `kick ${i}` })));
    });
  });

  describe(`${name}: with JOBS_KICK=off and a Neon Pool per request`, async () => {
    const h = await harness(`deploy_${name}_nokick`);
    await setup(h.db);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: false, transport: "ws" });
    }, 120_000);
    afterAll(async () => {
      await d?.close();
    });

    it("an enqueued job waits for the cron tick", async () => {
      const response = await d.request("/api/jobs", {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ job: "example.record", payload: { note: "waits" } }),
      });
      expect(response.status).toBe(201);
      await d.settle();
      // The request's Pool was closed before its response: no connection of the Neon driver is left.
      const neonConnections = () =>
        h.rows<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%neondatabase%'");
      for (let i = 0; (await neonConnections())[0]!.n > 0; i++) {
        if (i === 100) throw new Error("the request left a Neon connection open");
        await sleep(20);
      }
      await sleep(500);
      expect(await h.rows("SELECT job_name, status, attempt FROM jobs_queue")).toEqual([{ job_name: "example.record", status: "queued", attempt: 0 }]);
      await d.cron();
      expect(await h.rows("SELECT note FROM example_events")).toEqual([{ note: "waits" }]);
      expect(await h.rows("SELECT * FROM jobs_queue")).toEqual([]);
    });
  });

  afterAll(() => {
    // The benchmark of record is the README's; this prints what this run saw.
    if (latencies.length > 0) console.log(`enqueue-to-start with the kick, ${name}: ${latencies.join(", ")} ms`);
  });
};

/**
 * Fan-out and continuation through the platform's own invocation path: one cron delivery drains a
 * backlog larger than one tick can take in its budget, with more than one tick at once (each a
 * separate invocation), never more than JOBS_MAX_TICKS, and the deployment is idle afterwards.
 */
export const fleetSuite = (name: string, platform: Platform) => {
  describe(`${name}: fan-out and continuation`, async () => {
    const h = await harness(`deploy_${name}_fleet`);
    await setup(h.db);
    const lib = h.make(exampleJobs);
    let d: Deployment;
    beforeAll(async () => {
      d = await platform(h, { kick: false, transport: "http", extra: { JOBS_MAX_TICKS: "4", JOBS_CONCURRENCY: "5" } });
    }, 120_000);
    afterAll(async () => {
      await d?.settle();
      await d?.close();
    });

    it("one cron delivery drains a backlog through several overlapping tick invocations, at most JOBS_MAX_TICKS at once, then goes idle", async () => {
      // 300 jobs of 200 ms at concurrency 5: one tick's 1 s of claiming takes ~25, so the drain needs
      // several ticks at once (fan-out) and ticks after the first ones' budgets (continuation).
      await lib.enqueueMany(Array.from({ length: 300 }, () => ({ job: "example.sleep" as const, payload: { ms: 200 } })));
      const invocations = new Set<string>();
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const rows = await h.rows<{ slot: number; started: string }>(
            `SELECT slot, started_at::text AS started FROM jobs_ticks WHERE expires_at > now() AND NOT reserved`);
          peak = Math.max(peak, rows.length);
          for (const r of rows) invocations.add(`${r.slot} ${r.started}`);
          await sleep(20);
        }
      })();
      const started = Date.now();
      await d.cron();
      await expect.poll(async () => (await h.rows<{ n: number }>("SELECT count(*)::int AS n FROM jobs_queue"))[0]!.n, { timeout: 60_000, interval: 100 }).toBe(0);
      const drained = Date.now() - started;
      await d.settle();
      sampling = false;
      await sampler;
      console.log(`${name}: drained 300 jobs of 200 ms in ${drained} ms with one cron delivery; ${invocations.size} tick invocations, at most ${peak} at once`);
      expect(peak).toBeGreaterThan(1);
      expect(peak).toBeLessThanOrEqual(4);
      // More invocations than slots: ticks handed their slots on when their budgets ran out.
      expect(invocations.size).toBeGreaterThan(4);
      const [done] = await h.rows<{ ok: number; runs: number }>(
        "SELECT coalesce(sum(succeeded), 0)::int AS ok, coalesce(sum(succeeded + failed), 0)::int AS runs FROM jobs_metrics WHERE job_name = 'example.sleep'");
      expect(done).toEqual({ ok: 300, runs: 300 });
      // Idle again soon: no tick holds or has reserved a slot (a last continuation may still be finding nothing to do).
      await expect.poll(() => h.rows("SELECT slot FROM jobs_ticks WHERE expires_at > now()"), { timeout: 10_000, interval: 100 }).toEqual([]);
    }, 90_000);
  });
};
