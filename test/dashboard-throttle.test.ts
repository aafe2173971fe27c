// The dashboard's login throttle, request by request through the mounted dashboard, against a
// real PostgreSQL. Its waits run on an injected clock, so no test sleeps.
import { Hono } from "hono";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { createJobs, silentLogger } from "../src/index.js";
import { createDashboard } from "../src/dashboard/dashboard-app.js";
import { addressKey } from "../src/dashboard/client-address.js";
import { THROTTLE } from "../src/store/admin/login-throttle.js";
import { fixtureJobs, PASSWORD } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_throttle");
const { defs } = fixtureJobs();
const ORIGIN = "http://dash.test";
const WRONG = "not the password at all";

/** A dashboard on tables of its own (so counts never leak between tests), with a clock the test moves. */
const setup = async (env: Record<string, string> = { DASHBOARD_CLIENT_IP_HEADER: "x-real-ip" }) => {
  const jobs = await h.isolated(defs);
  let clock = Date.parse("2030-01-01T00:00:00Z");
  const app = new Hono();
  app.route("/dashboard", createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD, ...env }, now: () => new Date(clock) }));
  const request = (password: string, headers: Record<string, string> = {}, bindings?: unknown) =>
    app.request(
      `${ORIGIN}/dashboard/login`,
      {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ password, next: "/dashboard/jobs" }),
      },
      bindings,
    );
  const from = (ip: string, password: string) => request(password, { "x-real-ip": ip });
  const failures = async (key: string) =>
    (await h.rows<{ failures: number }>(`SELECT failures FROM ${jobs.tables.prefix}login_throttle WHERE key = $1`, [key]))[0]?.failures;
  return { jobs, app, request, from, failures, advance: (seconds: number) => void (clock += seconds * 1000) };
};

const answer = async (res: Response) => ({
  status: res.status,
  retryAfter: res.headers.get("retry-after"),
  cookie: res.headers.get("set-cookie"),
  alert: /role="alert" id="login-error">([^<]*)</.exec(await res.text())?.[1],
});

describe("login throttle: one address", () => {
  it("answers 30 wrong passwords in a row: 5 plainly, then a wait, then 429 without looking at the password", async () => {
    const t = await setup();
    const answers = [];
    for (let i = 0; i < 30; i++) answers.push(await answer(await t.from("203.0.113.10", WRONG)));
    for (const a of answers.slice(0, 5)) expect(a).toEqual({ status: 401, retryAfter: null, cookie: null, alert: "That password is not right." });
    expect(answers[5]).toEqual({
      status: 401,
      retryAfter: "1",
      cookie: null,
      alert: "That password is not right. Too many failed logins: wait 1 second before the next try.",
    });
    for (const a of answers.slice(6)) {
      expect(a).toEqual({ status: 429, retryAfter: "1", cookie: null, alert: "Too many failed logins: this try was not checked. Wait 1 second, then try again." });
    }
    // Tries made while waiting were not counted, and the right password does not get through either.
    expect(await t.failures("203.0.113.10")).toBe(6);
    expect(await answer(await t.from("203.0.113.10", PASSWORD))).toMatchObject({ status: 429, cookie: null });
    expect(await t.failures("203.0.113.10")).toBe(6);

    // Once the wait has passed, the right password works and clears the address's count.
    t.advance(1);
    const ok = await t.from("203.0.113.10", PASSWORD);
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/dashboard/jobs");
    expect(ok.headers.get("set-cookie")).toMatch(/^pgtick_dashboard=/);
    expect(await t.failures("203.0.113.10")).toBe(0);
    expect((await answer(await t.from("203.0.113.10", WRONG))).retryAfter).toBeNull();
  });

  it("doubles the wait with each further failure, up to 15 minutes, and forgets the address an hour after its last failure", async () => {
    const t = await setup();
    for (let i = 0; i < THROTTLE.freeFailures; i++) expect((await t.from("198.51.100.4", WRONG)).status).toBe(401);
    const waits: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await t.from("198.51.100.4", WRONG);
      expect(res.status).toBe(401);
      const wait = Number(res.headers.get("retry-after"));
      waits.push(wait);
      if (wait > 1) {
        // One second early is still too early, even with the right password.
        t.advance(wait - 1);
        expect((await t.from("198.51.100.4", PASSWORD)).status).toBe(429);
      }
      t.advance(wait > 1 ? 1 : wait);
    }
    expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 900, 900]);
    // The 15-minute page says minutes.
    const waiting = await answer(await t.from("198.51.100.4", WRONG));
    expect(waiting).toMatchObject({ status: 401, retryAfter: "900", alert: expect.stringContaining("wait 15 minutes") });

    t.advance(THROTTLE.forgetS + 1);
    expect(await answer(await t.from("198.51.100.4", WRONG))).toMatchObject({ status: 401, retryAfter: null });
    expect(await t.failures("198.51.100.4")).toBe(1);
  });

  it("counts parallel tries exactly: of 20 at once from a fresh address, 6 are looked at", async () => {
    const t = await setup();
    const statuses = (await Promise.all(Array.from({ length: 20 }, () => t.from("192.0.2.77", WRONG)))).map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(THROTTLE.freeFailures + 1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(20 - THROTTLE.freeFailures - 1);
    expect(await t.failures("192.0.2.77")).toBe(THROTTLE.freeFailures + 1);
  });

  it("logs once when an address starts to wait, naming the address and never the password", async () => {
    const t = await setup();
    for (let i = 0; i < 8; i++) await t.from("203.0.113.99", "guess-number-" + i);
    const warns = t.jobs.logs.filter((e) => e.level === "warn");
    expect(warns).toEqual([expect.objectContaining({ msg: expect.stringContaining("its tries now wait"), address: "203.0.113.99", failures: 6 })]);
    expect(JSON.stringify(t.jobs.logs)).not.toContain("guess-number");
  });
});

describe("login throttle: other addresses and the global count", () => {
  it("does not slow another address down for one address's failures", async () => {
    const t = await setup();
    for (let i = 0; i < 30; i++) await t.from("203.0.113.10", WRONG);
    expect(await answer(await t.from("203.0.113.11", WRONG))).toMatchObject({ status: 401, retryAfter: null });
    const ok = await t.from("203.0.113.12", PASSWORD);
    expect(ok.status).toBe(303);
    // The first address still waits: the others' logins did not reset it.
    expect((await t.from("203.0.113.10", PASSWORD)).status).toBe(429);
  });

  it("slows every failing address a little under failures from many addresses, never refusing a right password that did not wait", async () => {
    const t = await setup();
    // A distributed guess: one failure each from as many addresses as the global allowance.
    for (let i = 0; i < THROTTLE.globalFree; i++) expect((await t.from(`10.0.${i >> 8}.${i & 255}`, WRONG)).status).toBe(401);
    // Beyond it, even an address's first failure costs it a wait...
    expect(await answer(await t.from("10.9.0.1", WRONG))).toMatchObject({ status: 401, retryAfter: "1" });
    expect((await t.from("10.9.0.1", PASSWORD)).status).toBe(429);
    // ...while the owner, from an address that has not failed, gets straight in,
    expect((await t.from("10.9.0.2", PASSWORD)).status).toBe(303);
    // and the address that failed gets in once its (short) wait has passed.
    t.advance(1);
    expect((await t.from("10.9.0.1", PASSWORD)).status).toBe(303);

    // The global wait grows with the failures, to at most 30 seconds.
    await h.db.query(`UPDATE ${t.jobs.tables.prefix}login_throttle SET failures = 100000 WHERE key = '*'`);
    expect(await answer(await t.from("10.9.0.3", WRONG))).toMatchObject({ status: 401, retryAfter: String(THROTTLE.globalMaxWaitS) });
    expect(t.jobs.logs.filter((e) => e.msg.includes("every address"))).toHaveLength(1);

    // After the window the global count starts again.
    t.advance(THROTTLE.globalWindowS + 1);
    expect(await answer(await t.from("10.9.0.4", WRONG))).toMatchObject({ status: 401, retryAfter: null });
  });

  it("counts all addresses' failures within a window: a steady trickle never slows anyone", async () => {
    const t = await setup();
    // 150 failures from 150 addresses, one every 10 minutes: never more than 2 in 15 minutes.
    for (let i = 0; i < 150; i++) {
      expect(await answer(await t.from(`10.10.${Math.floor(i / 200)}.${i % 200}`, WRONG)), `failure ${i + 1}`).toMatchObject({ status: 401, retryAfter: null });
      t.advance(600);
    }
  });

  it("keeps the table small: rows of addresses forgotten an hour ago are removed by later attempts", async () => {
    const t = await setup();
    for (let i = 0; i < 30; i++) await t.from(`172.16.0.${i}`, WRONG);
    const count = async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${t.jobs.tables.prefix}login_throttle`))[0]!.n;
    expect(await count()).toBe(31);
    t.advance(THROTTLE.forgetS + 1);
    // Each attempt removes at most a batch of forgotten rows (20), and adds its own.
    await t.from("172.16.1.1", WRONG);
    expect(await count()).toBe(31 - THROTTLE.cleanupBatch + 1);
    await t.from("172.16.1.2", WRONG);
    expect(await count()).toBe(3);
  });
});

describe("login throttle: which address", () => {
  it("trusts no client-sent header by default: spoofed x-real-ip and x-forwarded-for share one counter", async () => {
    const t = await setup({});
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await t.request(WRONG, { "x-real-ip": `198.51.100.${i}`, "x-forwarded-for": `192.0.2.${i}` })).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401, 429]);
    expect(await t.failures("unknown")).toBe(6);
  });

  it("reads cf-connecting-ip on Cloudflare, x-real-ip on Vercel, the socket on Node", async () => {
    // Cloudflare: the runtime gives the request its `cf` object; a client cannot.
    const cf = await setup({});
    const onCloudflare = (ip: string) => {
      const req = new Request(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip, "x-real-ip": "192.0.2.1" },
        body: new URLSearchParams({ password: WRONG }),
      });
      Object.defineProperty(req, "cf", { value: { colo: "AMS" } });
      return cf.app.request(req);
    };
    await onCloudflare("2001:db8:1:2:aaaa::1");
    await onCloudflare("2001:db8:1:2:bbbb::2");
    expect(await cf.failures("2001:db8:1:2::/64")).toBe(2);

    const vercel = await setup({ VERCEL: "1" });
    await vercel.request(WRONG, { "x-real-ip": "203.0.113.50", "x-forwarded-for": "192.0.2.9" });
    expect(await vercel.failures("203.0.113.50")).toBe(1);

    const node = await setup({});
    await node.request(WRONG, { "x-real-ip": "192.0.2.9" }, { incoming: { socket: { remoteAddress: "::ffff:203.0.113.60" } } });
    expect(await node.failures("203.0.113.60")).toBe(1);
  });

  it("takes the last x-forwarded-for entry (the one the proxy appended) when that header is configured", async () => {
    const t = await setup({ DASHBOARD_CLIENT_IP_HEADER: "X-Forwarded-For" });
    await t.request(WRONG, { "x-forwarded-for": "192.0.2.1, 203.0.113.70" });
    await t.request(WRONG, { "x-forwarded-for": "192.0.2.2,203.0.113.70" });
    expect(await t.failures("203.0.113.70")).toBe(2);
  });

  it("keys IPv4 as written, IPv6 by its /64, and refuses what is not an address", () => {
    expect(addressKey(" 203.0.113.7 ")).toBe("203.0.113.7");
    expect(addressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(addressKey("2001:DB8:0:1:ffff::9")).toBe("2001:db8:0:1::/64");
    expect(addressKey("[2001:db8::1]")).toBe("2001:db8:0:0::/64");
    expect(addressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    for (const bad of ["", "*", "unknown", "256.1.1.1", "1.2.3", "2001:db8::1::2", "1:2:3:4:5:6:7:8:9", "not-an-ip", undefined]) {
      expect(addressKey(bad)).toBeUndefined();
    }
  });

  it("stays closed, saying why, when DASHBOARD_CLIENT_IP_HEADER is not a header name", async () => {
    const t = await setup({ DASHBOARD_CLIENT_IP_HEADER: "x real ip" });
    const res = await t.request(PASSWORD);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("DASHBOARD_CLIENT_IP_HEADER must be the name of one header");
  });
});

describe("login throttle: failures of its own", () => {
  it("counts a login body that does not parse as a try without a password, answering the login page, not a 500", async () => {
    const t = await setup();
    for (const [type, body] of [["multipart/form-data; boundary=x", "garbage"], ["multipart/form-data", "--x\r\n"]]) {
      const res = await t.app.request(`${ORIGIN}/dashboard/login`, { method: "POST", headers: { origin: ORIGIN, "content-type": type!, "x-real-ip": "192.0.2.200" }, body });
      expect(await answer(res)).toMatchObject({ status: 401, cookie: null, alert: "That password is not right." });
    }
    expect(await t.failures("192.0.2.200")).toBe(2);
  });


  it("answers 503 with the login page, and lets nobody in, when its table is missing, saying the database is not set up (not that it did not answer)", async () => {
    const jobs = h.make(defs, { tablePrefix: "never_migrated_" });
    const app = new Hono();
    app.route("/dashboard", createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD } }));
    const res = await app.request(`${ORIGIN}/dashboard/login`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: PASSWORD }),
    });
    expect(res.status).toBe(503);
    expect(res.headers.get("set-cookie")).toBeNull();
    const html = await res.text();
    expect(html).toContain("The database is not set up for this release: its tables are missing or behind (the server&#39;s log says what to run).");
    expect(html).toContain('name="password"');
    expect(jobs.logs).toEqual([expect.objectContaining({ level: "error", msg: "dashboard login: the throttle did not answer" })]);
  });

  it("says a database that does not exist is a misconfiguration, as the other pages do (it said the database did not answer)", async () => {
    const url = new URL(h.url);
    url.pathname = "/pgtick_no_such_database";
    const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    pool.on("error", () => {});
    try {
      const jobs = createJobs({ db: pool, jobs: defs, logger: silentLogger });
      const app = new Hono();
      app.route("/dashboard", createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD } }));
      const res = await app.request(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ password: PASSWORD }),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("set-cookie")).toBeNull();
      const html = await res.text();
      expect(html).toContain("The server is misconfigured (DATABASE_URL&#39;s database does not exist), so logging in cannot work: see its logs.");
      expect(html).not.toContain("did not answer");
    } finally {
      await pool.end();
    }
  });
});
