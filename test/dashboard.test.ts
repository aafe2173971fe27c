// The dashboard's login, session, CSRF and escaping, through the HTTP app that mounts it,
// request by request against a real PostgreSQL.
import { describe, expect, it } from "vitest";
import { createDashboard } from "../src/dashboard/dashboard-app.js";
import { createApp } from "../src/http/index.js";
import { createJobs, silentLogger } from "../src/index.js";
import { randomToken, sessionKey, signSession, verifySession } from "../src/dashboard/session.js";
import { deadCount, fixtureJobs, PASSWORD, queuedCount } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_http");
const { state, defs } = fixtureJobs();
const jobs = h.make(defs);
const env = { DASHBOARD_PASSWORD: PASSWORD, JOBS_API_TOKEN: "api-token-for-tests-0123456789abcdef", CRON_SECRET: "cron-secret-for-tests-0123456789abcdef" };
const app = createApp({ jobs, env });

const ORIGIN = "http://dash.test";
const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const x of Array.isArray(v) ? v : [v]) body.append(k, x);
  return body;
};
const post = (path: string, fields: Record<string, string | string[]>, headers: Record<string, string> = {}) =>
  app.request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", ...headers },
    body: form(fields),
  });

/** Logs in and returns the cookie header and the session's CSRF token, as a browser would hold them. */
const login = async () => {
  const res = await post("/dashboard/login", { password: PASSWORD, next: "/dashboard/" });
  expect(res.status).toBe(303);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  const page = await (await app.request(`${ORIGIN}/dashboard/dead-letters`, { headers: { cookie } })).text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
  return { cookie, csrf };
};

const makeDead = async (payload: Record<string, string>, job: "sync-account" | "note" = "sync-account") => {
  state.broken = true;
  const { id } = await jobs.enqueue(job, payload as never);
  expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
  return id;
};

describe("dashboard configuration", () => {
  it("stays closed without a password, saying how to configure it", async () => {
    for (const bad of [{}, { DASHBOARD_PASSWORD: "short" }, { DASHBOARD_PASSWORD: PASSWORD, DASHBOARD_SECRET: "too-short" }]) {
      const closed = createApp({ jobs, env: { ...bad, JOBS_API_TOKEN: env.JOBS_API_TOKEN } });
      for (const [method, path] of [["GET", "/dashboard/"], ["GET", "/dashboard/login"], ["GET", "/dashboard/dead-letters"], ["POST", "/dashboard/login"]] as const) {
        const res = await closed.request(`${ORIGIN}${path}`, { method, headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" }, body: method === "POST" ? "password=" : undefined });
        expect(res.status).toBe(503);
        const text = await res.text();
        expect(text).toContain("The dashboard is not configured");
        expect(text).toContain("DASHBOARD_PASSWORD");
        expect(res.headers.get("set-cookie")).toBeNull();
      }
    }
    // A session longer than a duration setting takes names its real bounds (it said "at least 1m");
    // in code, past a cookie's 400-day Max-Age, it was a 500 at login.
    for (const [settings, ttl] of [[{ DASHBOARD_SESSION_TTL: "30d" }, undefined], [{}, 401 * 86_400_000]] as const) {
      const closed = createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD, ...settings }, ...(ttl ? { sessionTtlMs: ttl } : {}) });
      const res = await closed.request(`${ORIGIN}/login`);
      expect(res.status).toBe(503);
      expect(await res.text()).toContain("DASHBOARD_SESSION_TTL must be a duration from 1m to 24d");
    }
  });

  it("is mounted at /dashboard, / redirects to it, and its cookie does not open the API", async () => {
    const root = await app.request(`${ORIGIN}/`);
    expect(root.status).toBe(303);
    expect(root.headers.get("location")).toBe("/dashboard/");
    for (const path of ["/dashboard", "/dashboard/", "/dashboard/jobs"]) {
      const res = await app.request(`${ORIGIN}${path}`);
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toBe(`/dashboard/login?next=${encodeURIComponent(path)}`);
    }
    const { cookie } = await login();
    expect((await app.request(`${ORIGIN}/dashboard`, { headers: { cookie } })).status).toBe(200);
    expect((await app.request(`${ORIGIN}/api/stats`, { headers: { cookie } })).status).toBe(401);
    const missing = await app.request(`${ORIGIN}/dashboard/nothing-here`, { headers: { cookie } });
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("The dashboard has no page here");
  });
});

describe("dashboard login and session", () => {
  it("sets a signed HttpOnly SameSite=Strict cookie with an expiry, Secure only over https", async () => {
    const plain = await post("/dashboard/login", { password: PASSWORD });
    const attrs = plain.headers.get("set-cookie")!;
    expect(attrs).toMatch(/^pgtick_dashboard=[\w-]+\.[\w-]+;/);
    expect(attrs).toContain("HttpOnly");
    expect(attrs).toContain("SameSite=Strict");
    expect(attrs).toContain("Path=/dashboard");
    expect(attrs).toContain("Max-Age=43200");
    expect(attrs).not.toContain("Secure");
    const https = await app.request("https://dash.test/dashboard/login", {
      method: "POST",
      headers: { origin: "https://dash.test", "content-type": "application/x-www-form-urlencoded" },
      body: form({ password: PASSWORD }),
    });
    expect(https.headers.get("set-cookie")).toContain("Secure");
  });

  it("refuses a wrong password and a login posted from another origin", async () => {
    const wrong = await post("/dashboard/login", { password: "not the password at all" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That password is not right");
    expect(wrong.headers.get("set-cookie")).toBeNull();
    const foreign = await post("/dashboard/login", { password: PASSWORD }, { origin: "http://evil.test" });
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get("set-cookie")).toBeNull();
  });

  it("refuses a form larger than it can be (413) before reading it whole, the open login and forms behind it", async () => {
    const stream = (bytes: number) => new ReadableStream<Uint8Array>({
      start(c) {
        for (let sent = 0; sent < bytes; sent += 65_536) c.enqueue(new TextEncoder().encode(`password=${"x".repeat(65_527)}`));
        c.close();
      },
    });
    const big = `password=${"x".repeat(100_000)}`;
    for (const body of [big, stream(200_000)]) {
      const res = await app.request(`${ORIGIN}/dashboard/login`, {
        method: "POST", headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" }, body, ...(typeof body === "string" ? {} : { duplex: "half" }),
      } as RequestInit);
      expect(res.status).toBe(413);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    const { cookie, csrf } = await login();
    const huge = await post("/dashboard/dead-letters/replay", { _csrf: csrf, job: "x".repeat(9 * 1_048_576) }, { cookie });
    expect(huge.status).toBe(413);
    // The login's fields still parse as before.
    expect((await post("/dashboard/login", { password: PASSWORD, next: "/dashboard/runs" })).headers.get("location")).toBe("/dashboard/runs");
  });

  it("slows down repeated wrong passwords from one address: after 5, tries wait and are answered 429 with Retry-After", async () => {
    // The real mount, reading the address from a header a proxy in front would set.
    const throttled = createApp({ jobs, env: { ...env, DASHBOARD_CLIENT_IP_HEADER: "x-real-ip" } });
    const attempt = (ip: string, password: string) =>
      throttled.request(`${ORIGIN}/dashboard/login`, {
        method: "POST",
        headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", "x-real-ip": ip },
        body: form({ password }),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await attempt("198.51.100.200", "not the password at all")).status);
    expect(statuses).toEqual([...Array<number>(6).fill(401), ...Array<number>(24).fill(429)]);
    const waiting = await attempt("198.51.100.200", PASSWORD);
    expect(waiting.status).toBe(429);
    expect(waiting.headers.get("retry-after")).toBe("1");
    expect(waiting.headers.get("content-type")).toContain("text/html");
    expect(waiting.headers.get("set-cookie")).toBeNull();
    expect(await waiting.text()).toContain("Too many failed logins: this try was not checked.");
    // Another address is not held up by those failures.
    expect((await attempt("198.51.100.201", PASSWORD)).status).toBe(303);
  });

  it("sends the login only back inside the dashboard", async () => {
    // Dot segments, plain or encoded, that a browser resolves out of the dashboard too.
    for (const next of ["//evil.test/x", "https://evil.test/", "/elsewhere", "/dashboard\\..\\x", "/dashboard/../api/health", "/dashboard/..//evil.test",
      "/dashboard/%2e%2e/api/health", "/dashboard/.%2E/x", "/dashboard/./../x"]) {
      const res = await post("/dashboard/login", { password: PASSWORD, next });
      expect(res.headers.get("location")).toBe("/dashboard/");
    }
    expect((await post("/dashboard/login", { password: PASSWORD, next: "/dashboard/jobs?job=a" })).headers.get("location")).toBe("/dashboard/jobs?job=a");
    expect((await post("/dashboard/login", { password: PASSWORD, next: "/dashboard/runs?job=a%2Fb" })).headers.get("location")).toBe("/dashboard/runs?job=a%2Fb");
    // Mounted at the root, a tab or newline a browser drops would leave "//evil.test".
    const root = createDashboard({ jobs, env: { DASHBOARD_PASSWORD: PASSWORD }, basePath: "/" });
    for (const next of ["/\t/evil.test", "/\n/evil.test", "/ /evil.test"]) {
      const res = await root.request(`${ORIGIN}/login`, { method: "POST", headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" }, body: form({ password: PASSWORD, next }) });
      expect(res.headers.get("location")).toBe("/");
    }
  });

  it("treats a forged, tampered, expired or foreign-key cookie as no login", async () => {
    const { cookie } = await login();
    const [name, value] = cookie.split("=") as [string, string];
    const [body, mac] = value.split(".") as [string, string];
    const key = await sessionKey(`pgtick-dashboard-session\u0000${PASSWORD}`);
    const otherKey = await sessionKey("another-secret-of-at-least-32-characters!");
    const forged = [
      // The first character of the MAC changed: its last one also carries bits a decoder ignores, so
      // changing that could leave the same bytes (the test then failed about once in a thousand runs).
      `${body}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`,
      `${btoa(JSON.stringify({ exp: Date.now() + 1e9, csrf: "x" })).replace(/=+$/, "")}.${mac}`,
      await signSession(key, { exp: Date.now() - 1000, csrf: randomToken() }),
      await signSession(otherKey, { exp: Date.now() + 60_000, csrf: randomToken() }),
      "garbage",
    ];
    for (const v of forged) {
      const res = await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie: `${name}=${v}` } });
      expect(res.status).toBe(303);
      expect(res.headers.get("location")).toContain("/dashboard/login");
    }
    // Signed with the right key under a longer DASHBOARD_SESSION_TTL than the 12 h it is now: that login is over.
    const longer = await signSession(key, { exp: Date.now() + 24 * 3_600_000, csrf: randomToken() });
    const refused = await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie: `${name}=${longer}` } });
    expect([refused.status, refused.headers.get("location")]).toEqual([303, expect.stringContaining("/dashboard/login")]);
    const within = await signSession(key, { exp: Date.now() + 11 * 3_600_000, csrf: randomToken() });
    expect((await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie: `${name}=${within}` } })).status).toBe(200);
    // The same key still accepts a good one (the derivation above is the documented one).
    expect(await verifySession(key, await signSession(key, { exp: Date.now() + 60_000, csrf: "t" }))).toMatchObject({ csrf: "t" });
  });

  it("logs out by clearing the cookie and ending the session: a copy of the cookie opens nothing after", async () => {
    const { cookie, csrf } = await login();
    const other = await login();
    const res = await post("/dashboard/logout", { _csrf: csrf }, { cookie });
    expect(res.status).toBe(303);
    expect(res.headers.get("set-cookie")).toMatch(/pgtick_dashboard=;.*Max-Age=0/);
    const page = await app.request(`${ORIGIN}/dashboard/jobs`, { headers: { cookie } });
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toMatch(/\/dashboard\/login\?next=/);
    const id = await makeDead({ account: "after-logout" });
    const form = await post("/dashboard/dead-letters/discard", { _csrf: csrf, id }, { cookie });
    expect(form.status).toBe(401);
    // A second Logout (a double click) ends where the first did, not on "needs a login".
    const again = await post("/dashboard/logout", { _csrf: csrf }, { cookie });
    expect([again.status, again.headers.get("location")]).toEqual([303, "/dashboard/login"]);
    expect(await deadCount(h)).toBeGreaterThan(0);
    expect((await jobs.deadLetters.get(id))?.id).toBe(id);
    // Another session goes on; what is kept is a digest of the session's token, never the token.
    expect((await app.request(`${ORIGIN}/dashboard/jobs`, { headers: { cookie: other.cookie } })).status).toBe(200);
    const kept = await h.rows<{ session: string }>(`SELECT session FROM jobs_dashboard_logouts`);
    expect(kept.length).toBeGreaterThan(0);
    for (const row of kept) expect(row.session).not.toContain(csrf);
    await jobs.deadLetters.discard(id);
    // The logged-out cookie is cleared where it is refused, and the login page shows its form for it
    // (it sent any signed cookie on to the overview, which sent it back: a loop).
    expect(page.headers.get("set-cookie")).toMatch(/pgtick_dashboard=;.*Max-Age=0/);
    const loginPage = await app.request(`${ORIGIN}/dashboard/login`, { headers: { cookie } });
    expect(loginPage.status).toBe(200);
    expect(await loginPage.text()).toContain('name="password"');
  });

  it("keeps a logout a day past the session's expiry, on the database's clock: a server whose clock is behind still refuses the cookie", async () => {
    // Ended an hour ago by the database's clock, still live by the clock of a server two hours behind.
    await h.db.query(`INSERT INTO jobs_dashboard_logouts (session, expires_at) VALUES ('ended-an-hour-ago', now() - interval '1 hour')`);
    const { cookie, csrf } = await login();
    expect((await post("/dashboard/logout", { _csrf: csrf }, { cookie })).status).toBe(303);
    expect(await h.rows(`SELECT 1 FROM jobs_dashboard_logouts WHERE session = 'ended-an-hour-ago'`)).toHaveLength(1);
    await h.db.query(`UPDATE jobs_dashboard_logouts SET expires_at = now() - interval '25 hours' WHERE session = 'ended-an-hour-ago'`);
    const again = await login();
    expect((await post("/dashboard/logout", { _csrf: again.csrf }, { cookie: again.cookie })).status).toBe(303);
    expect(await h.rows(`SELECT 1 FROM jobs_dashboard_logouts WHERE session = 'ended-an-hour-ago'`)).toHaveLength(0);
  });

  it("keeps working, logouts aside, on a database without the logouts table (code deployed before its migration)", async () => {
    const { cookie, csrf } = await login();
    await h.db.query(`ALTER TABLE jobs_dashboard_logouts RENAME TO jobs_dashboard_logouts_away`);
    try {
      expect((await app.request(`${ORIGIN}/dashboard/jobs`, { headers: { cookie } })).status).toBe(200);
      // Logging out clears this browser's cookie even when the session cannot be recorded as ended.
      const out = await post("/dashboard/logout", { _csrf: csrf }, { cookie });
      expect(out.status).toBe(503);
      expect(out.headers.get("set-cookie")).toMatch(/pgtick_dashboard=;.*Max-Age=0/);
      expect(await out.text()).toContain("logged out in this browser");
    } finally {
      await h.db.query(`ALTER TABLE jobs_dashboard_logouts_away RENAME TO jobs_dashboard_logouts`);
    }
  });
});

describe("dashboard CSRF", () => {
  it("refuses state changes without the cookie, from another origin, or without the session's token, and changes nothing", async () => {
    const id = await makeDead({ account: "csrf" });
    const { cookie, csrf } = await login();
    const other = await login();
    const path = `/dashboard/dead-letters/${id}/replay`;
    const attempts: Array<[number, Response]> = [
      [401, await post(path, { _csrf: csrf })],
      [403, await post(path, { _csrf: csrf }, { cookie, origin: "http://evil.test" })],
      [403, await post(path, { _csrf: csrf }, { cookie, origin: "null" })],
      [403, await post(path, {}, { cookie })],
      [403, await post(path, { _csrf: "forged-token" }, { cookie })],
      // Another session's token does not fit this session.
      [403, await post(path, { _csrf: other.csrf }, { cookie })],
    ];
    const noOrigin = await app.request(`${ORIGIN}${path}`, {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "cross-site", "content-type": "application/x-www-form-urlencoded" },
      body: form({ _csrf: csrf }),
    });
    attempts.push([403, noOrigin]);
    for (const [status, res] of attempts) {
      expect(res.status).toBe(status);
      expect(await res.text()).toContain("Nothing was changed");
    }
    expect(await deadCount(h, "sync-account")).toBe(1);
    expect(await queuedCount(h)).toBe(0);

    const ok = await post(path, { _csrf: csrf }, { cookie });
    expect(ok.status).toBe(303);
    expect(await queuedCount(h)).toBe(1);
    state.broken = false;
    expect((await jobs.tick({ budgetMs: 5_000 })).succeeded).toBe(1);
  });
});

describe("dashboard replay and escaping", () => {
  it("answers an edited replay of a letter another operator replayed first as the plain replay does: not replayed, already replayed", async () => {
    const id = await makeDead({ account: "edited-late" });
    const a = await login();
    await jobs.deadLetters.replay(id);
    const late = await post(`/dashboard/dead-letters/${id}/replay`, { _csrf: a.csrf, payload: JSON.stringify({ account: "fixed" }) }, { cookie: a.cookie });
    expect([late.status, late.headers.get("location")]).toEqual([303, "/dashboard/dead-letters?done=replayed&n=0&skipped=1"]);
    await jobs.cancel(id);
  });

  it("refuses an edited payload holding an integer past 2^53, as the API does (it was replayed rounded)", async () => {
    const id = await makeDead({ account: "big-number" });
    const a = await login();
    const refused = await post(`/dashboard/dead-letters/${id}/replay`, { _csrf: a.csrf, payload: '{"account":"x","n":12345678901234567}' }, { cookie: a.cookie });
    expect(refused.status).toBe(422);
    expect(await refused.text()).toContain("the number 12345678901234567 cannot be held exactly (integers past 2^53 are rounded): send it as a string");
    expect(await jobs.deadLetters.get(id)).not.toBeNull();
    await jobs.deadLetters.discard(id);
  });

  it("queues a dead letter once when two operators replay it at the same moment", async () => {
    const id = await makeDead({ account: "race" });
    const a = await login();
    const b = await login();
    const responses = await Promise.all([a, b, a, b].map((s) => post(`/dashboard/dead-letters/${id}/replay`, { _csrf: s.csrf }, { cookie: s.cookie })));
    const locations = responses.map((r) => r.headers.get("location"));
    expect(locations.filter((l) => l === "/dashboard/dead-letters?done=replayed&n=1")).toHaveLength(1);
    expect(locations.filter((l) => l === "/dashboard/dead-letters?done=replayed&n=0&skipped=1")).toHaveLength(3);
    expect(await queuedCount(h, "sync-account")).toBe(1);
    const notice = await (await app.request(`${ORIGIN}${locations.find((l) => l?.includes("skipped"))}`, { headers: { cookie: a.cookie } })).text();
    expect(notice).toContain("Replayed 0 dead letters. 1 was not replayed");
    state.broken = false;
    expect((await jobs.tick({ budgetMs: 5_000 })).succeeded).toBe(1);
  });

  it("replays all matching past more than 10,000 letters a live job holds in one click (each call reads at most 10,000)", async () => {
    const t = jobs.tables;
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at, idempotency_key)
                      SELECT gen_random_uuid(), 'note', '{"text":"x"}', now() + interval '1 hour', 'held-' || g FROM generate_series(1, 12000) g`);
    await h.db.query(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at, idempotency_key)
                      SELECT gen_random_uuid(), 'note', '{"text":"x"}', 1, 1, 0, 'exhausted', now() - interval '1 day' + g * interval '1 millisecond', now(),
                             CASE WHEN g <= 12000 THEN 'held-' || g END
                      FROM generate_series(1, 12003) g`);
    try {
      const { cookie, csrf } = await login();
      const res = await post("/dashboard/dead-letters/replay-all", { _csrf: csrf, job: "note", reason: "" }, { cookie });
      expect(res.headers.get("location")).toBe("/dashboard/dead-letters?done=replayed&n=3");
    } finally {
      await h.db.query(`DELETE FROM ${t.queue} WHERE job_name = 'note'`);
      await h.db.query(`DELETE FROM ${t.deadLetters} WHERE job_name = 'note'`);
    }
  });

  it("says what a click replayed when a later call of it meets a conflict (it said nothing was replayed)", async () => {
    const t = jobs.tables;
    await h.db.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at, idempotency_key)
                      SELECT gen_random_uuid(), 'note', '{"text":"x"}', now() + interval '1 hour', 'held-' || g FROM generate_series(1, 10000) g`);
    // Three free letters, ten thousand held ones, then one whose key another session is enqueueing.
    await h.db.query(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at, idempotency_key)
                      SELECT gen_random_uuid(), 'note', '{"text":"x"}', 1, 1, 0, 'exhausted', now() - interval '1 day' + g * interval '1 millisecond', now(),
                             CASE WHEN g BETWEEN 4 AND 10003 THEN 'held-' || (g - 3) WHEN g = 10004 THEN 'race' END
                      FROM generate_series(1, 10004) g`);
    const other = await h.main.connect();
    try {
      await other.query("BEGIN");
      await other.query(`INSERT INTO ${t.queue} (id, job_name, payload, run_at, idempotency_key) VALUES (gen_random_uuid(), 'note', '{"text":"y"}', now() + interval '1 hour', 'race')`);
      const { cookie, csrf } = await login();
      const clicked = post("/dashboard/dead-letters/replay-all", { _csrf: csrf, job: "note", reason: "" }, { cookie });
      // The click's second call waits on the other session's key, which then commits: that call is a conflict.
      await new Promise((r) => setTimeout(r, 1_000));
      await other.query("COMMIT");
      const res = await clicked;
      expect(res.headers.get("location")).toBe("/dashboard/dead-letters?done=replayed&n=3&skipped=1&left=1");
      expect(await queuedCount(h, "note")).toBe(10_000 + 1 + 3);
    } finally {
      other.release();
      await h.db.query(`DELETE FROM ${t.queue} WHERE job_name = 'note'`);
      await h.db.query(`DELETE FROM ${t.deadLetters} WHERE job_name = 'note'`);
    }
  });

  it("answers an overview whose reads fail with the failed page at once, without reading the stats again (a stalled database held it 30 s)", async () => {
    let calls = 0;
    const failing = new Proxy(jobs, {
      get: (target, key, receiver) =>
        key === "stats" ? () => (calls++, Promise.reject(Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }))) : Reflect.get(target, key, receiver),
    });
    const stalled = createApp({ jobs: failing, env });
    const { cookie } = await login();
    const res = await stalled.request(`${ORIGIN}/dashboard/`, { headers: { cookie } });
    expect(res.status).toBe(503);
    expect(calls).toBe(1);
  });

  it("escapes HTML in payloads and errors on every page that shows them", async () => {
    const evil = `<script>alert(1)</script>"'&`;
    const id = await makeDead({ text: evil }, "note");
    const { cookie } = await login();
    for (const path of ["/dashboard/dead-letters", `/dashboard/dead-letters/${id}`, `/dashboard/jobs/${id}`]) {
      const res = await app.request(`${ORIGIN}${path}`, { headers: { cookie } });
      expect(res.status).toBe(200);
      const html = await res.text();
      expect(html).not.toContain("<script>");
      expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    }
  });

  it("answers a bad cursor or an unknown id with a page that says so, never a 500", async () => {
    const { cookie } = await login();
    const bad = await app.request(`${ORIGIN}/dashboard/jobs?cursor=nope`, { headers: { cookie } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("cursor is not one this API returned");
    const deadBad = await app.request(`${ORIGIN}/dashboard/dead-letters?cursor=%00`, { headers: { cookie } });
    expect(deadBad.status).toBe(400);
    for (const path of ["/dashboard/jobs/not-a-uuid", `/dashboard/dead-letters/${crypto.randomUUID()}`]) {
      const res = await app.request(`${ORIGIN}${path}`, { headers: { cookie } });
      expect(res.status).toBe(404);
      expect(await res.text()).toMatch(/not in the queue|no such dead letter/);
    }
  });

  it("keeps a filter on a job this deployment no longer defines chosen in its drop-down, on every list", async () => {
    const { cookie } = await login();
    for (const path of ["/dashboard/dead-letters?job=ghost.old-job", "/dashboard/jobs?job=ghost.old-job", "/dashboard/runs?job=ghost.old-job"]) {
      const html = await (await app.request(`${ORIGIN}${path}`, { headers: { cookie } })).text();
      expect(html, path).toMatch(/<option value="ghost\.old-job" selected="">ghost\.old-job<\/option>/);
    }
  });

  it("gives each job's chart an id of its own, also a job named like the overall charts", async () => {
    const { cookie } = await login();
    await h.db.query(`INSERT INTO jobs_metrics (minute, job_name, succeeded) VALUES (date_trunc('minute', now()), 'all', 1), (date_trunc('minute', now()), 'depth', 1)`);
    const html = await (await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie } })).text();
    const ids = [...html.matchAll(/ id="(chart-[^"]+)"/g)].map((m) => m[1]!);
    expect(ids).toContain("chart-job-all");
    expect(ids.length).toBe(new Set(ids).size);
    await h.db.query(`DELETE FROM jobs_metrics WHERE job_name IN ('all', 'depth')`);
  });

  it("draws a small chart for the 12 busiest jobs of the range only, and says how many more there are", async () => {
    const { cookie } = await login();
    // 15 jobs, job-01 the least busy: each with as many runs as its number.
    await h.db.query(`INSERT INTO jobs_metrics (minute, job_name, succeeded)
                      SELECT date_trunc('minute', now()), 'busy-' || lpad(i::text, 2, '0'), i FROM generate_series(1, 15) i`);
    try {
      const html = await (await app.request(`${ORIGIN}/dashboard/`, { headers: { cookie } })).text();
      const perJob = [...html.matchAll(/ id="chart-job-([^"]+)"/g)].map((m) => decodeURIComponent(m[1]!));
      // Other tests' jobs have runs in this hour too: the busiest 12 of them all, by name.
      const { rows } = await h.db.query<{ job_name: string }>(`SELECT job_name FROM jobs_metrics WHERE minute > now() - interval '1 hour'
        GROUP BY job_name ORDER BY sum(succeeded + retried + dead_lettered + requeued) DESC, job_name LIMIT 12`);
      expect(perJob).toEqual(rows.map((r) => r.job_name).sort());
      expect(perJob).toContain("busy-15");
      expect(perJob).not.toContain("busy-01");
      const [all] = (await h.db.query<{ n: number }>(`SELECT count(DISTINCT job_name)::int AS n FROM jobs_metrics WHERE minute > now() - interval '1 hour'`)).rows;
      expect(html).toContain(`and ${all!.n - 12} less busy jobs`);
    } finally {
      await h.db.query(`DELETE FROM jobs_metrics WHERE job_name LIKE 'busy-%'`);
    }
  });

  it("refreshes the 24 h and 7 d charts when the page loads, not on every live poll (the hour's chart is live)", async () => {
    const { cookie } = await login();
    const live = async (range: string, headers: Record<string, string>) =>
      (await (await app.request(`${ORIGIN}/dashboard/?range=${range}`, { headers: { cookie, ...headers } })).text()).includes('id="ov-charts"');
    expect(await live("7d", {})).toBe(true);
    expect(await live("7d", { "x-pgtick-live": "1" })).toBe(false);
    expect(await live("24h", { "x-pgtick-live": "1" })).toBe(false);
    expect(await live("1h", { "x-pgtick-live": "1" })).toBe(true);
  });

  // A job's page refreshed its state every 3 s, and sent and drew its whole payload each time: 1 MB a poll for a payload at the limit.
  it("leaves a job's payload out of a live poll, which swaps in only the job's state", async () => {
    const { cookie } = await login();
    const { id } = await jobs.enqueue("note", { text: "x".repeat(200_000) });
    try {
      const page = async (headers: Record<string, string>) => (await app.request(`${ORIGIN}/dashboard/jobs/${id}`, { headers: { cookie, ...headers } })).text();
      const loaded = await page({});
      expect(loaded).toContain('<pre id="payload">');
      expect(loaded.length).toBeGreaterThan(200_000);
      const polled = await page({ "x-pgtick-live": "1" });
      expect(polled).not.toContain('id="payload"');
      expect(polled.length).toBeLessThan(20_000);
      expect(polled).toContain('<div id="job" data-live="">');
      expect((await jobs.get(id, { payload: false }))?.payload).toBeUndefined();
    } finally {
      await jobs.cancel(id);
    }
  });

  // The page wrote the payload out twice, above and in the editor: 2 MB for a payload at the limit.
  it("writes a large dead letter's payload out once, in the editor; a small one also above it", async () => {
    const { cookie, csrf } = await login();
    const t = jobs.tables;
    const insert = async (text: string) =>
      (await h.rows<{ id: string }>(`INSERT INTO ${t.deadLetters} (id, job_name, payload, attempts, max_attempts, priority, reason, dead_at, created_at)
                                    VALUES (gen_random_uuid(), 'note', jsonb_build_object('text', $1::text), 1, 1, 0, 'exhausted', now(), now()) RETURNING id`, [text]))[0]!.id;
    const large = await insert("L".repeat(100_000));
    const small = await insert("tiny-payload");
    try {
      const page = async (id: string) => (await app.request(`${ORIGIN}/dashboard/dead-letters/${id}`, { headers: { cookie } })).text();
      const big = await page(large);
      expect(big.split("L".repeat(100_000)).length - 1).toBe(1);
      expect(big.indexOf("L".repeat(100_000))).toBeGreaterThan(big.indexOf('id="payload-edit"'));
      expect(big).toContain("98 KB: shown once, in the editor below.");
      expect(big.length).toBeLessThan(120_000);
      const little = await page(small);
      expect(little.split("tiny-payload").length - 1).toBe(2);
      expect(little).toContain('<pre id="payload">');
      // An edit the schema refuses comes back in the editor: the stored payload is then written out above it.
      const refused = await post(`/dashboard/dead-letters/${large}/replay`, { _csrf: csrf, payload: JSON.stringify({ text: 5 }) }, { cookie });
      expect(refused.status).toBe(422);
      const again = await refused.text();
      expect(again.split("L".repeat(100_000)).length - 1).toBe(1);
      expect(again).toContain(`<pre id="payload">{&quot;text&quot;:&quot;${"L".repeat(100_000)}`);
      // Shown at the dead letter's own address, not the form's action (which a reload posts again, and a visit answers 404).
      expect(again).toContain(`<main id="main" data-url="/dashboard/dead-letters/${large}">`);
    } finally {
      await h.db.query(`DELETE FROM ${t.deadLetters} WHERE id = ANY ($1::uuid[])`, [[large, small]]);
    }
  });

  it("leaves the job names of a list's filter out of a live poll, which swaps in the list only", async () => {
    const { cookie } = await login();
    for (const list of ["/jobs", "/runs", "/dead-letters"]) {
      const page = async (headers: Record<string, string>) => (await app.request(`${ORIGIN}/dashboard${list}`, { headers: { cookie, ...headers } })).text();
      expect(await page({})).toContain('<option value="sync-account">');
      const polled = await page({ "x-pgtick-live": "1" });
      expect(polled).not.toContain('<option value="sync-account">');
      expect(polled).toContain("data-live");
    }
  });

  it("pages each list with its filter kept: on to the next page, and back to the first", async () => {
    const { cookie } = await login();
    // 51 notes dead-lettered (a dead letter and a run each), and 51 delayed ones queued: one more than a page.
    await jobs.enqueueMany(Array.from({ length: 51 }, (_, i) => ({ job: "note" as const, payload: { text: `page ${i}` } })));
    await jobs.tick({ budgetMs: 10_000 });
    await jobs.enqueueMany(Array.from({ length: 51 }, (_, i) => ({ job: "note" as const, payload: { text: `later ${i}` }, delayMs: 3_600_000 })));
    const html = async (path: string) => (await app.request(`${ORIGIN}${path}`, { headers: { cookie } })).text();
    const decode = (href: string) => href.replaceAll("&amp;", "&");
    for (const list of ["jobs", "dead-letters", "runs"]) {
      const first = await html(`/dashboard/${list}?job=note`);
      expect(first, list).not.toContain(">First page<");
      const next = decode(/<a href="([^"]+)" rel="next">/.exec(first)?.[1] ?? "");
      expect(next, list).toMatch(new RegExp(`^/dashboard/${list}\\?job=note&cursor=[^&]+$`));
      const second = await html(next);
      expect(decode(/<a href="([^"]+)">First page<\/a>/.exec(second)?.[1] ?? ""), list).toBe(`/dashboard/${list}?job=note`);
    }
    await h.db.query(`DELETE FROM jobs_queue WHERE job_name = 'note'`);
  });

  it("queues one job when Run again is posted twice from the same page (a double click)", async () => {
    const id = await makeDead({ account: "twice" });
    const { cookie, csrf } = await login();
    const run = (await jobs.runs.list({ jobId: id })).items[0]!;
    const html = await (await app.request(`${ORIGIN}/dashboard/runs/${run.id}`, { headers: { cookie } })).text();
    const once = /name="once" value="([^"]+)"/.exec(html)![1]!;
    const [a, b] = await Promise.all([1, 2].map(() => post(`/dashboard/runs/${run.id}/rerun`, { _csrf: csrf, once }, { cookie })));
    expect(a!.status).toBe(303);
    expect(a!.headers.get("location")).toBe(b!.headers.get("location"));
    expect(await queuedCount(h, "sync-account")).toBe(1);
    // Another visit to the page is another form: it queues another job.
    const again = /name="once" value="([^"]+)"/.exec(await (await app.request(`${ORIGIN}/dashboard/runs/${run.id}`, { headers: { cookie } })).text())![1]!;
    expect(again).not.toBe(once);
    await post(`/dashboard/runs/${run.id}/rerun`, { _csrf: csrf, once: again }, { cookie });
    expect(await queuedCount(h, "sync-account")).toBe(2);
    await h.db.query(`DELETE FROM jobs_queue WHERE job_name = 'sync-account'`);
  });

  it("queues one job for a second click that comes after the first one's job has run (it queued another)", async () => {
    const id = await makeDead({ account: "twice-after" });
    const { cookie, csrf } = await login();
    const run = (await jobs.runs.list({ jobId: id })).items[0]!;
    const page = await (await app.request(`${ORIGIN}/dashboard/runs/${run.id}`, { headers: { cookie } })).text();
    const once = /name="once" value="([^"]+)"/.exec(page)![1]!;
    const first = await post(`/dashboard/runs/${run.id}/rerun`, { _csrf: csrf, once }, { cookie });
    // Its job fails at once, and is a dead letter again, before the second click.
    expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
    const second = await post(`/dashboard/runs/${run.id}/rerun`, { _csrf: csrf, once }, { cookie });
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await queuedCount(h, "sync-account")).toBe(0);
    expect((await jobs.runs.list({ job: "sync-account", idempotencyKey: `dashboard:rerun:${once}` })).items).toHaveLength(1);
  });

  it("replays a dead letter once for a second click that comes after the replayed job failed again (it replayed it twice)", async () => {
    const id = await makeDead({ account: "replay-twice" });
    const { cookie, csrf } = await login();
    for (const from of [`/dashboard/dead-letters/${id}`, "/dashboard/dead-letters"]) {
      const page = await (await app.request(`${ORIGIN}${from}`, { headers: { cookie } })).text();
      const form = new RegExp(`action="/dashboard/dead-letters/${id}/replay[^"]*"[^>]*>[\\s\\S]*?name="replays" value="(\\d+)"`).exec(page);
      expect(form, from).not.toBeNull();
      const replays = form![1]!;
      const first = await post(`/dashboard/dead-letters/${id}/replay`, { _csrf: csrf, replays }, { cookie });
      expect(first.headers.get("location"), from).toContain("done=replayed&n=1");
      expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
      const second = await post(`/dashboard/dead-letters/${id}/replay`, { _csrf: csrf, replays }, { cookie });
      expect(second.headers.get("location"), from).toContain("done=replayed&n=0&skipped=1");
    }
    expect((await jobs.deadLetters.get(id))?.replays).toBe(2);
    await jobs.deadLetters.discard(id);
  });
});

describe("dashboard schedules", () => {
  // 1,000 schedules were one page of every card: 8.4 MB at 5,000.
  it("shows them a page at a time, and an action comes back to its page", async () => {
    const many = createJobs({
      db: h.main,
      jobs: defs,
      logger: silentLogger,
      schedules: Array.from({ length: 60 }, (_, i) => ({ name: `s${String(i).padStart(2, "0")}`, cron: "0 3 * * *", job: "note", payload: { text: `s${i}` } })),
    });
    const manyApp = createApp({ jobs: many, env });
    const res = await manyApp.request(`${ORIGIN}/dashboard/login`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: form({ password: PASSWORD, next: "/dashboard/" }),
    });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const get = async (path: string) => {
      const r = await manyApp.request(`${ORIGIN}/dashboard${path}`, { headers: { cookie } });
      return { status: r.status, text: await r.text() };
    };
    const cards = (text: string) => [...text.matchAll(/<section class="card"[^>]* id="schedule-([^"]+)"/g)].map((m) => m[1]);
    const first = await get("/schedules");
    expect(cards(first.text)).toEqual(Array.from({ length: 50 }, (_, i) => `s${String(i).padStart(2, "0")}`));
    const next = /<a href="\/dashboard\/schedules\?cursor=([^"]+)" rel="next">/.exec(first.text)![1]!;
    const second = await get(`/schedules?cursor=${next}`);
    expect(cards(second.text)).toEqual(Array.from({ length: 10 }, (_, i) => `s${50 + i}`));
    expect(second.text).not.toContain('rel="next"');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(second.text)![1]!;
    const action = `/dashboard/schedules/s55/pause?cursor=${next}`;
    expect(second.text).toContain(`action="${action}"`);
    const paused = await manyApp.request(`${ORIGIN}${action}`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie },
      body: form({ _csrf: csrf }),
    });
    expect([paused.status, paused.headers.get("location")]).toEqual([303, `/dashboard/schedules?done=paused&cursor=${next}#schedule-s55`]);
    const bad = await get("/schedules?cursor=nope");
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("cursor is not one this API returned");
    // An action that fails with a cursor this page did not make answers with the first page, its links clean.
    const refused = await manyApp.request(`${ORIGIN}/dashboard/schedules/nope/pause?cursor=bad`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie },
      body: form({ _csrf: csrf }),
    });
    const text = await refused.text();
    expect(refused.status).toBe(404);
    expect(cards(text)).toHaveLength(50);
    expect(text).not.toContain("cursor=bad");
    expect(dataUrl(text)).toBe("/dashboard/schedules");
    // Refused on page 2, the page refreshes page 2 (it said the first page's address: its live poll swapped page 1 in).
    const gone = await manyApp.request(`${ORIGIN}/dashboard/schedules/removed/pause?cursor=${next}`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie },
      body: form({ _csrf: csrf }),
    });
    const goneText = await gone.text();
    expect([gone.status, cards(goneText)[0], dataUrl(goneText)]).toEqual([404, "s50", `/dashboard/schedules?cursor=${next}`]);
  });
});

describe("dashboard schedule Run now", () => {
  it("queues one job when the same form is posted twice (a double click), also after that job has run; the page showing that run queues another", async () => {
    const api = createJobs({ db: h.main, jobs: defs, logger: silentLogger, schedules: [{ name: "run-twice", cron: "0 3 * * *", job: "note", payload: { text: "twice" } }] });
    const runApp = createApp({ jobs: api, env });
    const res = await runApp.request(`${ORIGIN}/dashboard/login`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: form({ password: PASSWORD, next: "/dashboard/" }),
    });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const page = async () => {
      const text = await (await runApp.request(`${ORIGIN}/dashboard/schedules`, { headers: { cookie } })).text();
      const card = new RegExp(`action="/dashboard/schedules/run-twice/run"[^>]*>[\\s\\S]*?name="after" value="([^"]+)"`).exec(text);
      return { csrf: /name="_csrf" value="([^"]+)"/.exec(text)![1]!, after: card![1]! };
    };
    const runNow = (fields: Record<string, string>) =>
      runApp.request(`${ORIGIN}/dashboard/schedules/run-twice/run`, { method: "POST", headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie }, body: form(fields) });
    const notes = async () => (await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM jobs_queue WHERE job_name = 'note' AND correlation_id LIKE 'schedule:run-twice:manual:%'`))[0]!.n;
    const { csrf, after } = await page();
    expect(after).toBe("none");
    // The form is the same at every refresh (a token made per render changed the live part every 3 s).
    expect((await page()).after).toBe(after);
    const [a, b] = await Promise.all([1, 2].map(() => runNow({ _csrf: csrf, after })));
    expect([a!.status, b!.status]).toEqual([303, 303]);
    expect(await notes()).toBe(1);
    // The job runs; a late second click finds its run in the history and queues nothing.
    await api.tick({ budgetMs: 3_000 });
    expect(await notes()).toBe(0);
    expect((await runNow({ _csrf: csrf, after })).status).toBe(303);
    expect(await notes()).toBe(0);
    // The page now shows that run as the schedule's last job: its form is another run.
    const again = await page();
    expect(again.after).not.toBe(after);
    await runNow({ _csrf: again.csrf, after: again.after });
    expect(await notes()).toBe(1);
    await h.db.query(`DELETE FROM jobs_queue WHERE job_name = 'note'`);
    await h.db.query(`DELETE FROM jobs_schedules WHERE name = 'run-twice'`);
  });
});

describe("dashboard forms", () => {
  it("reads a form of 100,000 repeats of one field in linear time (a copy per repeat held the event loop for minutes)", async () => {
    const { cookie } = await login();
    const started = performance.now();
    const res = await app.request(`${ORIGIN}/dashboard/dead-letters/discard`, {
      method: "POST",
      headers: { cookie, origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: "id=&".repeat(100_000),
    });
    // No token: refused, after the form was read. Quadratic, these 100,000 copies of up to 100,000 items took minutes.
    expect(res.status).toBe(403);
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 60_000);
});

describe("dashboard schedule next runs", () => {
  it("a next run whose time has come says the next tick enqueues it (it read '8 s ago', as if it had run)", async () => {
    const due = createJobs({ db: h.main, jobs: defs, logger: silentLogger, schedules: [{ name: "due-soon", cron: "*/5 * * * *", job: "note", payload: { text: "due" }, missed: "latest" }] });
    await due.tick({ budgetMs: 2_000 });
    // The occurrence not yet handled has passed (the last five-minute mark at least 8 s ago): the cron has not started this minute's tick yet.
    await h.db.query(`UPDATE jobs_schedules SET next_run_at = date_trunc('minute', now() - interval '8 seconds') - (extract(minute FROM now() - interval '8 seconds')::int % 5) * interval '1 minute' WHERE name = 'due-soon'`);
    const dueApp = createApp({ jobs: due, env });
    const res = await dueApp.request(`${ORIGIN}/dashboard/login`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded" },
      body: form({ password: PASSWORD, next: "/dashboard/" }),
    });
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    const text = await (await dueApp.request(`${ORIGIN}/dashboard/schedules`, { headers: { cookie } })).text();
    const runs = [...text.matchAll(/<ol class="next-runs">([\s\S]*?)<\/ol>/g)].map((m) => m[1]!).join("");
    const items = [...runs.matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ""));
    expect(items).toHaveLength(3);
    expect(items[0]).toContain("(due: the next tick enqueues it)");
    expect(items.join("\n")).not.toContain("ago");
    expect(items[1]).toMatch(/\(in \d+ (s|min)\)/);
    await h.db.query(`DELETE FROM jobs_schedules WHERE name = 'due-soon'`);
  });
});

const dataUrl = (html: string) => /<main id="main" data-url="([^"]*)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");

describe("a refused action's page refreshes the page it was taken on", () => {
  it("a job that is gone: its own address (its live poll fetched the action's, a 404, and said the page was out of date)", async () => {
    const { cookie, csrf } = await login();
    const id = crypto.randomUUID();
    for (const verb of ["cancel", "run"]) {
      const res = await post(`/dashboard/jobs/${id}/${verb}`, { _csrf: csrf }, { cookie });
      expect(res.status).toBe(404);
      expect(dataUrl(await res.text())).toBe(`/dashboard/jobs/${id}`);
    }
  });

  it("a job cancelled by the first of two clicks: the second ends where the first did (it said the job could not be cancelled)", async () => {
    const { cookie, csrf } = await login();
    const { id } = await jobs.enqueue("note", { text: "twice" }, { delayMs: 3_600_000 });
    const [a, b] = [await post(`/dashboard/jobs/${id}/cancel`, { _csrf: csrf }, { cookie }), await post(`/dashboard/jobs/${id}/cancel`, { _csrf: csrf }, { cookie })];
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(b.headers.get("location")).toBe(a.headers.get("location"));
  });

  it("a filtered list of dead letters: the filter kept through a refused selection (it came back as the whole list)", async () => {
    const { cookie, csrf } = await login();
    const list = await (await app.request(`${ORIGIN}/dashboard/dead-letters?job=note&reason=exhausted`, { headers: { cookie } })).text();
    expect(dataUrl(list)).toBe("/dashboard/dead-letters?job=note&reason=exhausted");
    const refused = await post("/dashboard/dead-letters/replay?job=note&reason=exhausted", { _csrf: csrf }, { cookie });
    const text = await refused.text();
    expect(refused.status).toBe(400);
    expect(text).toContain("Select at least one dead letter to replay.");
    expect(dataUrl(text)).toBe("/dashboard/dead-letters?job=note&reason=exhausted");
    expect(text).toMatch(/<option value="note" selected="">/);
    // The selection's actions carry the filter, so a refused one comes back to it.
    await makeDead({ text: "kept" }, "note");
    const filtered = await (await app.request(`${ORIGIN}/dashboard/dead-letters?job=note`, { headers: { cookie } })).text();
    expect(filtered).toContain('action="/dashboard/dead-letters/replay?job=note"');
    expect(filtered).toContain('formaction="/dashboard/dead-letters/discard?job=note"');
    // Done, every action comes back to the list as it was filtered: it came back to the whole list, whose
    // "Replay all" then replayed every job's dead letters.
    const id = /name="id" value="([0-9a-f-]{36})"/.exec(filtered)![1]!;
    expect(filtered).toContain(`action="/dashboard/dead-letters/${id}/replay?job=note"`);
    const one = await post(`/dashboard/dead-letters/${id}/replay?job=note`, { _csrf: csrf }, { cookie });
    expect(one.headers.get("location")).toBe("/dashboard/dead-letters?job=note&done=replayed&n=1");
    const all = await post("/dashboard/dead-letters/replay-all?job=note&reason=exhausted", { _csrf: csrf, job: "note", reason: "exhausted" }, { cookie });
    expect(all.headers.get("location")).toMatch(/^\/dashboard\/dead-letters\?job=note&reason=exhausted&done=replayed&n=\d+$/);
    const none = await post("/dashboard/dead-letters/discard?job=note&cursor=abc", { _csrf: csrf, id: crypto.randomUUID() }, { cookie });
    expect(none.headers.get("location")).toBe("/dashboard/dead-letters?job=note&cursor=abc&done=discarded&n=0");
  });
});
