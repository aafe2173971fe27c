// The dashboard's icon and script, its CSP, and the new routes' answers to bad input (a range it
// does not offer, Run now on a job that is gone or running), request by request.
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createDashboard } from "../src/dashboard/dashboard-app.js";
import { createApp } from "../src/http/index.js";
import { type Db, defineJob, memoryLogger } from "../src/index.js";
import { PASSWORD } from "./support/browser.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("dash_assets");
const waiting: Array<() => void> = [];
const held = defineJob({ name: "held", schema: z.object({}), handler: () => new Promise<void>((go) => waiting.push(go)) });
const jobs = h.make([held]);
const ORIGIN = "http://dash.test";
const mount = (refreshMs?: number) => {
  const app = new Hono();
  app.route("/dashboard", createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD }, refreshMs }));
  return app;
};
const app = mount();

const login = async () => {
  const res = await app.request(`${ORIGIN}/dashboard/login`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: PASSWORD }),
  });
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const html = await (await app.request(`${ORIGIN}/dashboard/jobs`, { headers: { cookie } })).text();
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(html)![1]! };
};

describe("behind a proxy that ends TLS", () => {
  it("takes a login posted from the https page when X-Forwarded-Proto says https, and still refuses another site", async () => {
    const post = (origin: string, proto?: string) =>
      app.request(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded", ...(proto ? { "x-forwarded-proto": proto } : {}) },
        body: new URLSearchParams({ password: PASSWORD }),
      });
    const behind = await post("https://dash.test", "https");
    expect(behind.status).toBe(303);
    expect(behind.headers.get("set-cookie")).toContain("Secure");
    expect((await post("https://evil.test", "https")).status).toBe(403);
    // Without the proxy's word, the https origin is not this http site.
    expect((await post("https://dash.test")).status).toBe(403);
  });
});

describe("dashboard assets", () => {
  it("serves a real ICO at favicon.ico without a login, and the pages point to it", async () => {
    const res = await app.request(`${ORIGIN}/dashboard/favicon.ico`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/x-icon");
    const bytes = new Uint8Array(await res.arrayBuffer());
    // ICONDIR: reserved 0, type 1 (icon), one image; the image is a PNG.
    expect([...bytes.slice(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    expect([...bytes.slice(22, 26)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    const login = await (await app.request(`${ORIGIN}/dashboard/login`)).text();
    expect(login).toContain('<link rel="icon" href="/dashboard/favicon.ico"');
  });

  it("loads its one script from its own origin: the CSP allows nothing inline, and the login page has none", async () => {
    const { cookie } = await login();
    const page = await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie } });
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await page.text();
    expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/dashboard/live.js" defer="">']);
    const js = await app.request(`${ORIGIN}/dashboard/live.js`);
    expect(js.headers.get("content-type")).toContain("text/javascript");
    const code = await js.text();
    expect(code).toContain("setTimeout(poll,3000)");
    expect(code).toContain("document.hidden");
    expect(await (await app.request(`${ORIGIN}/dashboard/login`)).text()).not.toContain("<script");
    // refreshMs: 0 turns the refresh off.
    expect(await (await mount(0).request(`${ORIGIN}/dashboard/live.js`)).text()).toBe("");
  });
});

describe("dashboard input", () => {
  it("answers a range it does not offer with 400 and the reason, never a 500", async () => {
    const { cookie } = await login();
    for (const range of ["2h", "toString", "%00", "7D"]) {
      const res = await app.request(`${ORIGIN}/dashboard/?range=${range}`, { headers: { cookie } });
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("range must be one of 1h, 24h, 7d");
    }
    expect((await app.request(`${ORIGIN}/dashboard/?range=24h`, { headers: { cookie } })).status).toBe(200);
  });

  it("refuses Run now on a job that is gone (404) or running (409), changing nothing", async () => {
    const { cookie, csrf } = await login();
    const post = (path: string) =>
      app.request(`${ORIGIN}/dashboard${path}`, {
        method: "POST",
        headers: { cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _csrf: csrf }),
      });
    for (const id of ["not-a-uuid", crypto.randomUUID()]) {
      const res = await post(`/jobs/${id}/run`);
      expect(res.status).toBe(404);
      expect(await res.text()).toContain("This job is not in the queue");
    }
    const { id } = await jobs.enqueue("held", {});
    const ticking = jobs.tick({ budgetMs: 10_000 });
    while ((await jobs.get(id))?.status !== "running") await sleep(20);
    const before = await h.rows(`SELECT run_at, updated_at FROM jobs_queue WHERE id = $1`, [id]);
    const res = await post(`/jobs/${id}/run`);
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("A tick is running this job now, so it cannot be run again. Nothing was changed.");
    expect(await h.rows(`SELECT run_at, updated_at FROM jobs_queue WHERE id = $1`, [id])).toEqual(before);
    waiting.splice(0).forEach((go) => go());
    expect((await ticking).succeeded).toBe(1);
    // Finished meanwhile (its page still open): 404 saying so, not "a tick is running it".
    for (const action of ["run", "cancel"]) {
      const done = await post(`/jobs/${id}/${action}`);
      expect(done.status).toBe(404);
      expect(await done.text()).toContain("This job has finished (succeeded)");
    }
  });
});

describe("with the database down", () => {
  it("answers a page with HTML saying so (503), mounted alone or in createApp, and logs the cause", async () => {
    const down: Db = { query: () => Promise.reject(Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" })) };
    const logs = memoryLogger();
    // Up for the login (its throttle is counted in the database), down for the pages.
    let current = jobs;
    const alone = new Hono();
    alone.route("/dashboard", createDashboard({ jobs: () => current, env: { DASHBOARD_PASSWORD: PASSWORD }, logger: logs }));
    const api = createApp({ jobs: async () => ({ jobs: current }), env: { DASHBOARD_PASSWORD: PASSWORD, JOBS_API_TOKEN: "t".repeat(24) } });
    for (const app of [alone, api]) {
      current = jobs;
      const res = await app.request(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ password: PASSWORD }),
      });
      const cookie = res.headers.get("set-cookie")?.split(";")[0];
      current = h.make([held], {}, down);
      for (const path of ["/dashboard/", "/dashboard/jobs", "/dashboard/dead-letters"]) {
        const page = await app.request(`${ORIGIN}${path}`, { headers: cookie ? { cookie } : {} });
        expect([path, page.status, page.headers.get("content-type")]).toEqual([path, 503, "text/html; charset=UTF-8"]);
        expect(await page.text()).toContain("The database did not answer");
      }
    }
    // At warn, as the API logs an outage (an open tab asks every few seconds while it lasts).
    expect(logs.entries.find((e) => e.msg === "dashboard page failed")).toMatchObject({ level: "warn", error: expect.stringContaining("ECONNREFUSED") });
  });
});
