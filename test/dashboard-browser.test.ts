// The dashboard in a real browser: Debian's Chromium, driven by playwright-core,
// against the app served on 127.0.0.1 with a real PostgreSQL behind it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { dashboardApp, deadCount, fixtureJobs, launchBrowser, PASSWORD, queuedCount, screenshot, serve, type Served } from "./support/browser.js";
import { createJobs, memoryLogger } from "../src/index.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_browser");
const { state, defs } = fixtureJobs();
// Built here rather than with h.make, to pass a schedule for the Schedules page.
const jobs = createJobs({
  db: h.main,
  jobs: defs,
  schedules: [{ name: "new-year-sync", cron: "30 3 1 1 *", timezone: "Europe/London", job: "sync-account", payload: { account: "yearly" } }],
  settings: { leaseMarginMs: 1_000 },
  logger: memoryLogger(),
});

let server: Served;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const url = (path: string) => `${server.url}/dashboard${path}`;

/** Runs a tick the way the platform cron would, and waits for it. */
const tick = () => jobs.tick({ budgetMs: 5_000 });

/** Makes dead letters: enqueue while the handler is broken, then tick. */
const kill = async (items: Array<{ job: "sync-account" | "send-email" | "note"; payload: Record<string, string> }>) => {
  state.broken = true;
  for (const i of items) await jobs.enqueueUnchecked([{ job: i.job, payload: i.payload }]);
  const report = await tick();
  expect(report.deadLettered).toBe(items.length);
};

const login = async (p: Page) => {
  await p.goto(url("/"));
  await expect.poll(() => p.url()).toContain("/dashboard/login");
  await p.getByLabel("Dashboard password").fill(PASSWORD);
  await p.getByRole("button", { name: "Log in" }).click();
  await p.waitForURL(url("/"));
};

beforeAll(async () => {
  server = await serve(dashboardApp(jobs).fetch);
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  // Fail at the step that went wrong, well within the test's own timeout.
  context.setDefaultTimeout(8_000);
  page = await context.newPage();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("dashboard in Chromium", () => {
  it("refuses a wrong password, then logs in and shows the overview", async () => {
    await page.goto(url("/dead-letters"));
    await page.waitForURL(/\/dashboard\/login\?next=/);
    await screenshot(page, "01-login");
    await page.getByLabel("Dashboard password").fill("not the password at all");
    await page.getByRole("button", { name: "Log in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toContain("That password is not right");

    await page.getByLabel("Dashboard password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    // Back where the login started.
    await page.waitForURL(url("/dead-letters"));
    const cookie = (await context.cookies()).find((c) => c.name === "pgtick_dashboard")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard", secure: false });
    expect(cookie.expires).toBeGreaterThan(Date.now() / 1000 + 3600);

    await page.goto(url("/"));
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
    for (const name of ["Throughput", "Queue over time", "Queue", "Dead letters", "Last tick"]) {
      expect(await page.getByRole("heading", { name, exact: true }).count()).toBe(1);
    }
    expect(await page.locator("#card-queued .n").textContent()).toBe("0");
    expect(await page.getByRole("alert").textContent()).toContain("No tick has run yet");
  });

  it("shows a failing job as a dead letter, replays it, and after a tick it has succeeded and left the list", async () => {
    await kill([{ job: "sync-account", payload: { account: "acme" } }]);
    await page.goto(url("/dead-letters"));
    const row = page.getByRole("row").filter({ hasText: "sync-account" });
    expect(await row.count()).toBe(1);
    expect(await row.textContent()).toContain("upstream refused account acme");
    expect(await row.textContent()).toContain("1/1");
    await screenshot(page, "02-dead-letters");

    await row.getByRole("link", { name: "sync-account" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Dead letter: sync-account");
    expect(await page.locator("#last-error").textContent()).toContain("PermanentJobError: upstream refused account acme");
    expect(JSON.parse((await page.locator("#payload").textContent())!)).toEqual({ account: "acme" });
    await screenshot(page, "03-dead-letter-detail");

    state.broken = false;
    await page.getByRole("button", { name: "Replay", exact: true }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Replayed 1 dead letter");
    expect(await deadCount(h)).toBe(0);
    expect(await queuedCount(h, "sync-account")).toBe(1);

    const report = await tick();
    expect(report.succeeded).toBe(1);
    expect(state.ran).toContain("sync:acme");
    await page.goto(url("/dead-letters"));
    expect(await page.getByText("No dead letters.").count()).toBe(1);

    // The overview now shows the tick and the minute's counts.
    await page.goto(url("/"));
    expect(await page.locator("#chart-all figcaption").textContent()).toContain("1 succeeded");
    expect(await page.locator("#chart-all figcaption").textContent()).toContain("1 dead-lettered");
    expect(await page.locator("#last-tick").textContent()).toContain("Succeeded1");
    expect(await page.getByRole("alert").count()).toBe(0);
    await screenshot(page, "04-overview");
  });

  it("replays selected dead letters, and all matching a filter", async () => {
    await kill([
      { job: "sync-account", payload: { account: "a1" } },
      { job: "sync-account", payload: { account: "a2" } },
      { job: "sync-account", payload: { account: "a3" } },
      { job: "send-email", payload: { to: "x@bounce.test", subject: "hi" } },
    ]);
    await page.goto(url("/dead-letters"));
    expect(await page.getByRole("checkbox").count()).toBe(4);
    for (const account of ["a1", "a2"]) {
      await page.getByRole("row").filter({ hasText: `account ${account}` }).getByRole("checkbox").check();
    }
    await page.getByRole("button", { name: "Replay selected" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Replayed 2 dead letters");
    expect(await page.getByRole("checkbox").count()).toBe(2);
    expect(await queuedCount(h, "sync-account")).toBe(2);

    // Filter to one job: the bulk button names the filter and replays only those.
    await page.getByLabel("Job", { exact: true }).selectOption("sync-account");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(await page.getByRole("checkbox").count()).toBe(1);
    await screenshot(page, "05-dead-letters-filtered");
    await page.getByRole("button", { name: "Replay all matching (job sync-account)" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Replayed 1 dead letter");
    expect(await queuedCount(h, "sync-account")).toBe(3);
    expect(await deadCount(h, "send-email")).toBe(1);

    state.broken = false;
    expect((await tick()).succeeded).toBe(3);
    await page.goto(url("/dead-letters"));
    expect(await page.getByRole("checkbox").count()).toBe(1);
  });

  it("replays with an edited payload: an invalid one shows the schema error by the field and queues nothing, a valid one runs", async () => {
    expect(await deadCount(h, "send-email")).toBe(1);
    await page.getByRole("link", { name: "send-email" }).click();
    const field = page.getByLabel(/Payload \(JSON\)/);
    await field.fill(JSON.stringify({ to: "not an address", subject: "" }));
    await page.getByRole("button", { name: "Replay with this payload" }).click();
    await expect.poll(() => page.locator("#payload-errors").textContent()).toContain("to");
    const errors = await page.locator("#payload-errors li").allTextContents();
    expect(errors.length).toBe(2);
    expect(errors.join("\n")).toMatch(/to: .*email/i);
    expect(errors.join("\n")).toMatch(/subject: /);
    expect(await field.getAttribute("aria-invalid")).toBe("true");
    // What the operator typed is still there to fix.
    expect(JSON.parse(await field.inputValue())).toEqual({ to: "not an address", subject: "" });
    expect(await queuedCount(h)).toBe(0);
    expect(await deadCount(h, "send-email")).toBe(1);
    await screenshot(page, "06-edit-invalid");

    await field.fill("{ not json");
    await page.getByRole("button", { name: "Replay with this payload" }).click();
    await expect.poll(() => page.locator("#payload-errors").textContent()).toContain("not valid JSON");
    expect(await queuedCount(h)).toBe(0);

    await field.fill(JSON.stringify({ to: "fixed@example.com", subject: "hello again" }));
    await page.getByRole("button", { name: "Replay with this payload" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Replayed 1 dead letter");
    const [queued] = await h.rows<{ payload: unknown }>(`SELECT payload FROM jobs_queue WHERE job_name = 'send-email'`);
    expect(queued!.payload).toEqual({ to: "fixed@example.com", subject: "hello again" });
    expect((await tick()).succeeded).toBe(1);
    expect(state.ran).toContain("email:fixed@example.com");
  });

  it("shows a payload and an error holding <script> as text, and runs none of it", async () => {
    const evil = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
    await kill([{ job: "note", payload: { text: evil } }]);
    await page.goto(url("/dead-letters"));
    const row = page.getByRole("row").filter({ hasText: "note" });
    expect(await row.locator(".err").textContent()).toBe(`PermanentJobError: could not store ${evil}`);
    await row.getByRole("link", { name: "note" }).click();
    expect(JSON.parse((await page.locator("#payload").textContent())!)).toEqual({ text: evil });
    expect(await page.locator("#last-error").textContent()).toContain(evil);
    expect(await page.locator("main script, main img").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await screenshot(page, "07-script-as-text");

    await page.getByRole("button", { name: "Discard" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Discarded 1 dead letter");
    expect(await deadCount(h, "note")).toBe(0);
  });

  it("lists and filters jobs, shows one, and cancels it", async () => {
    const a = await jobs.enqueue("sync-account", { account: "later-1" }, { delayMs: 3_600_000 });
    await jobs.enqueue("send-email", { to: "b@example.com", subject: "later" }, { delayMs: 3_600_000 });
    await page.goto(url("/jobs"));
    expect(await page.getByRole("row").count()).toBe(3);
    await page.getByLabel("Job", { exact: true }).selectOption("sync-account");
    await page.getByLabel("Status", { exact: true }).selectOption("queued");
    await page.getByRole("button", { name: "Filter" }).click();
    expect(await page.getByRole("row").count()).toBe(2);
    await screenshot(page, "08-jobs");
    await page.getByRole("link", { name: "sync-account" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Job sync-account");
    expect(await page.locator("main").textContent()).toContain(a.id);
    expect(JSON.parse((await page.locator("#payload").textContent())!)).toEqual({ account: "later-1" });
    await screenshot(page, "09-job-detail");
    await page.getByRole("button", { name: "Cancel this job" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("The job was cancelled");
    expect(await queuedCount(h, "sync-account")).toBe(0);
    expect(await queuedCount(h, "send-email")).toBe(1);
  });

  it("refuses a request without the session cookie, and a form posted from another origin", async () => {
    await kill([{ job: "sync-account", payload: { account: "victim" } }]);
    const [dead] = await h.rows<{ id: string }>(`SELECT id FROM jobs_dead_letters WHERE job_name = 'sync-account'`);
    const replayUrl = url(`/dead-letters/${dead!.id}/replay`);

    // A fresh browser with no cookie: pages send it to the login, actions are refused.
    const stranger = await browser.newContext();
    const other = await stranger.newPage();
    await other.goto(url("/dead-letters"));
    expect(other.url()).toContain("/dashboard/login");
    const anonymous = await other.request.post(replayUrl, { form: { _csrf: "guess" }, headers: { origin: server.url } });
    expect(anonymous.status()).toBe(401);
    expect(await anonymous.text()).toContain("Nothing was changed");
    await stranger.close();

    // A page on another origin (same host, other port: same site, so SameSite lets the cookie through)
    // posts a form to the dashboard in the logged-in browser. Even with the right token, Origin refuses it.
    await page.goto(url("/"));
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const evil = await serve(
      () =>
        new Response(
          `<!doctype html><form method="post" action="${replayUrl}"><input type="hidden" name="_csrf" value="${token}"><button>Win a prize</button></form>`,
          { headers: { "content-type": "text/html" } },
        ),
    );
    try {
      await page.goto(evil.url);
      const [response] = await Promise.all([page.waitForResponse(replayUrl), page.getByRole("button", { name: "Win a prize" }).click()]);
      expect(response.status()).toBe(403);
      await page.waitForLoadState();
      expect(await page.getByRole("alert").textContent()).toContain("came from another site");
      await screenshot(page, "10-refused-foreign-origin");
    } finally {
      await evil.close();
    }
    expect(await deadCount(h, "sync-account")).toBe(1);
    expect(await queuedCount(h)).toBe(1);
  });

  it("shows schedules with their next runs, and pauses, resumes and runs one now", async () => {
    const before = await queuedCount(h, "sync-account");
    await page.goto(url("/schedules"));
    const card = page.locator("#schedule-new-year-sync");
    expect(await card.getByRole("heading").textContent()).toBe("new-year-sync ");
    expect(await card.textContent()).toContain("30 3 1 1 *");
    expect(await card.textContent()).toContain("Europe/London");
    const description = (await jobs.schedules.list())[0]!.description;
    expect(await card.textContent()).toContain(description);
    const runs = await card.locator(".next-runs li time").evaluateAll((els) => els.map((e) => e.getAttribute("datetime")));
    expect(runs.length).toBe(3);
    // January 1st, 03:30 in London is 03:30 UTC (winter time).
    for (const r of runs) expect(r).toMatch(/^\d{4}-01-01T03:30:00/);
    await screenshot(page, "11-schedules");

    await card.getByRole("button", { name: "Pause new-year-sync" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("The schedule is paused");
    expect(await card.locator(".badge.paused").count()).toBe(1);
    expect(await card.textContent()).toContain("none while paused");
    expect((await jobs.schedules.list())[0]!.paused).toBe(true);

    await card.getByRole("button", { name: "Resume new-year-sync" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("running again");
    expect(await card.locator(".badge.paused").count()).toBe(0);

    await card.getByRole("button", { name: "Run new-year-sync now" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("queued to run now");
    expect(await queuedCount(h, "sync-account")).toBe(before + 1);
    expect(await card.getByRole("link", { name: "job" }).count()).toBe(1);
  });

  it("fits a phone screen: no page scrolls sideways, and the actions stay reachable", async () => {
    // The dead letter left by the refused foreign-origin replay gives the tables a row.
    expect(await deadCount(h)).toBeGreaterThan(0);
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await context.storageState() });
    const p = await phone.newPage();
    try {
      for (const [path, name] of [["/", "12-phone-overview"], ["/dead-letters", "13-phone-dead-letters"], ["/jobs", "14-phone-jobs"], ["/schedules", "15-phone-schedules"]] as const) {
        await p.goto(url(path));
        expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        await screenshot(p, name);
      }
      await p.goto(url("/dead-letters"));
      expect(await p.getByRole("button", { name: "Replay selected" }).isVisible()).toBe(true);
    } finally {
      await phone.close();
    }
  });
});
