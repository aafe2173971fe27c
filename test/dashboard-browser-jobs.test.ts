// The dashboard in a real browser (see dashboard-browser.test.ts): the Jobs and Schedules pages,
// requests refused for want of a session or for coming from another origin, and every page on a
// phone screen. The tests run in order: each starts from the rows the one before left.
import { beforeAll, describe, expect, it } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { deadCount, queuedCount, screenshot, serve, type Served } from "./support/browser.js";
import { dashboardBrowserFixture } from "./support/dashboard-browser-fixture.js";

const { h, jobs, open, url, kill, login } = await dashboardBrowserFixture("dash_browser_jobs");

let server: Served;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ server, browser, context, page } = await open());
  // The login itself is tested in dashboard-browser.test.ts; these tests start logged in.
  await login(page);
});

describe("dashboard in Chromium", () => {
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
    const description = (await jobs.schedules.list()).items[0]!.description;
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
    expect((await jobs.schedules.list()).items[0]!.paused).toBe(true);

    await card.getByRole("button", { name: "Resume new-year-sync" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("running again");
    expect(await card.locator(".badge.paused").count()).toBe(0);

    await card.getByRole("button", { name: "Run now: new-year-sync" }).click();
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
