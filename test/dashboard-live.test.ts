// Live pages in Chromium: the overview and a job's page change on their own as a tick runs
// (no reload: a mark set on the window survives), Run now starts a delayed job, a job held
// back by a limit says which, and the page stops asking while its tab is hidden.
import { Hono } from "hono";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createDashboard } from "../src/dashboard/dashboard-app.js";
import { defineJob, silentLogger } from "../src/index.js";
import { launchBrowser, PASSWORD, screenshot, serve, type Served } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_live");
/** Runs of `held` wait here until the test lets them go. */
const waiting: Array<() => void> = [];
const release = () => waiting.splice(0).forEach((go) => go());
const held = defineJob({
  name: "held",
  schema: z.object({ n: z.number() }),
  concurrency: { limit: 1, key: () => "shared" },
  handler: () => new Promise<{ done: true }>((go) => waiting.push(() => go({ done: true }))),
});
const quick = defineJob({ name: "quick", schema: z.object({ n: z.number() }), handler: () => {} });
const jobs = h.make([held, quick]);
const tick = () => jobs.tick({ budgetMs: 15_000 });
/** What the dashboard reads through: the queue, or one whose database does not answer. */
let serving: typeof jobs = jobs;
const down = h.make([held, quick], {}, { query: () => Promise.reject(new Error("connect ECONNREFUSED")) });

/** Each change shows within this long: the page refreshes every 3 s (the default). */
const LIVE = { timeout: 5_000, interval: 100 };

let server: Served;
let browser: Browser;
let page: Page;
const url = (path: string) => `${server.url}/dashboard${path}`;

/** A mark that a reload would wipe. */
const mark = (p: Page) => p.evaluate(() => Object.assign(window, { __kept: "yes" }));
const kept = (p: Page) => p.evaluate(() => (window as unknown as { __kept?: string }).__kept);
const badge = (p: Page) => p.locator("#job-status").textContent();

beforeAll(async () => {
  const app = new Hono();
  app.route("/dashboard", createDashboard({ jobs: () => serving, env: { DASHBOARD_PASSWORD: PASSWORD }, logger: silentLogger }));
  server = await serve(app.fetch);
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  context.setDefaultTimeout(8_000);
  page = await context.newPage();
  await page.goto(url("/login"));
  await page.getByLabel("Dashboard password").fill(PASSWORD);
  await page.getByRole("button", { name: "Log in" }).click();
  await page.waitForURL(url("/"));
});

afterAll(async () => {
  release();
  await browser?.close();
  await server?.close();
});

describe("live dashboard pages", () => {
  it("shows a job enqueued through the API on the open overview, and its page goes queued, running, succeeded, without a reload", async () => {
    await page.goto(url("/"));
    expect(await page.locator("#card-queued .n").textContent()).toBe("0");
    await mark(page);
    const { id } = await jobs.enqueue("held", { n: 1 });
    await expect.poll(() => page.locator("#card-queued .n").textContent(), LIVE).toBe("1");
    expect(await kept(page)).toBe("yes");

    await page.goto(url(`/jobs/${id}`));
    expect(await badge(page)).toBe("queued");
    await mark(page);
    const overview = await page.context().newPage();
    await overview.goto(url("/"));

    const ran = tick();
    await expect.poll(() => badge(page), LIVE).toBe("running");
    const state = await page.locator("#job").textContent();
    for (const field of ["Started", "Running for", "Lease expires"]) expect(state).toContain(field);
    // The overview, open meanwhile, marks the tick as running and counts it against the cap.
    await expect.poll(() => overview.locator("#card-running .n").textContent(), LIVE).toBe("1");
    await expect.poll(() => overview.locator("#tick-in-progress").count(), LIVE).toBe(1);
    expect(await overview.locator("#card-ticks .n").textContent()).toBe(`1 of ${jobs.settings.maxTicks}`);
    expect(await overview.locator("#last-tick").textContent()).toContain("Claimed so far1");
    await screenshot(page, "20-live-job-running");

    release();
    await expect.poll(() => badge(page), LIVE).toBe("succeeded");
    expect(await page.locator("#output").textContent()).toContain('"done": true');
    expect(await kept(page)).toBe("yes");
    await screenshot(page, "21-live-job-succeeded");
    expect((await ran).succeeded).toBe(1);
    await expect.poll(() => overview.locator("#tick-in-progress").count(), LIVE).toBe(0);
    await overview.close();
  });

  it("says which limit a due job waits on", async () => {
    const first = await jobs.enqueue("held", { n: 2 });
    const second = await jobs.enqueue("held", { n: 3 });
    const ran = tick();
    await expect.poll(async () => (await jobs.get(first.id))?.status, LIVE).toBe("running");
    await page.goto(url(`/jobs/${second.id}`));
    expect(await badge(page)).toBe("queued");
    expect(await page.locator("#waiting-on").textContent()).toBe("its concurrency limit: 1 of 1 running for key \"shared\"");
    release();
    // Once the first is done, the second is admitted: the page shows it running, then done.
    await expect.poll(() => badge(page), LIVE).toBe("running");
    expect(await page.locator("#waiting-on").count()).toBe(0);
    release();
    await expect.poll(() => badge(page), LIVE).toBe("succeeded");
    expect((await ran).succeeded).toBe(2);
  });

  it("runs a delayed job now: Run now makes it due, and the next tick runs it", async () => {
    const { id } = await jobs.enqueue("quick", { n: 4 }, { delayMs: 3_600_000 });
    await page.goto(url(`/jobs/${id}`));
    expect(await page.locator("#job").textContent()).toContain("delayed");
    // A job that is already due has no Run now.
    const due = await jobs.enqueue("quick", { n: 5 });
    const other = await page.context().newPage();
    await other.goto(url(`/jobs/${due.id}`));
    expect(await other.getByRole("button", { name: "Run now" }).count()).toBe(0);
    await other.close();

    await page.getByRole("button", { name: "Run now" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("The job is due now");
    const [row] = await h.rows<{ due: boolean }>(`SELECT run_at <= now() AS due FROM jobs_queue WHERE id = $1`, [id]);
    expect(row!.due).toBe(true);
    expect(await page.getByRole("button", { name: "Run now" }).count()).toBe(0);
    await mark(page);
    expect((await tick()).succeeded).toBe(2);
    await expect.poll(() => badge(page), LIVE).toBe("succeeded");
    expect(await kept(page)).toBe("yes");
  });

  it("updates the jobs list on its own, and stops asking while the tab is hidden", async () => {
    const polls: string[] = [];
    page.on("request", (r) => {
      if (r.headers()["x-pgtick-live"] === "1") polls.push(r.url());
    });
    await page.goto(url("/jobs"));
    expect(await page.getByText("No jobs match").count()).toBe(1);
    const { id } = await jobs.enqueue("quick", { n: 6 }, { delayMs: 3_600_000 });
    await expect.poll(() => page.locator(`a[href$="/jobs/${id}"]`).count(), LIVE).toBe(1);
    expect(polls.length).toBeGreaterThan(0);
    expect(new Set(polls)).toEqual(new Set([url("/jobs")]));

    // What a browser does when the tab goes to the background.
    const setHidden = (hidden: boolean) =>
      page.evaluate((h) => {
        Object.defineProperty(document, "hidden", { configurable: true, get: () => h });
        Object.defineProperty(document, "visibilityState", { configurable: true, get: () => (h ? "hidden" : "visible") });
        document.dispatchEvent(new Event("visibilitychange"));
      }, hidden);
    await setHidden(true);
    // Let a request already under way finish, then count: nothing more while hidden.
    await page.waitForLoadState("networkidle");
    const before = polls.length;
    await jobs.cancel(id);
    await page.waitForTimeout(7_000);
    expect(polls.length).toBe(before);
    expect(await page.locator(`a[href$="/jobs/${id}"]`).count()).toBe(1);

    // Visible again: it asks at once and catches up.
    await setHidden(false);
    await expect.poll(() => page.locator(`a[href$="/jobs/${id}"]`).count(), { timeout: 2_000 }).toBe(0);
    expect(polls.length).toBeGreaterThan(before);
  });

  it("leaves an unchanged region as it is, keeps what was scrolled when one changes (a wide table went back to its left edge every 3 s), and waits while the pointer rests on a link", async () => {
    {
      // Due in days, half an hour from a change of what the page says of it ("in 2 d 12 h"): the same at every refresh.
      const later = { delayMs: 2.5 * 86_400_000 + 1_800_000 };
      await jobs.enqueue("quick", { n: 70 }, later);
      await page.goto(url("/jobs"));
      const scrolled = () => page.evaluate(() => {
        const wide = [...document.querySelectorAll("[data-live] *")].find((e) => e.scrollWidth > e.clientWidth + 20);
        if (!wide) return null;
        wide.scrollLeft = 120;
        (window as unknown as { __region?: Element }).__region = document.querySelector("[data-live]")!;
        return wide.scrollLeft;
      });
      // A table wider than its box, as a long row makes it on a narrow screen (the page's own box, outside the region).
      await page.evaluate(() => void (document.querySelector("main")!.style.width = "300px"));
      expect(await scrolled()).toBeGreaterThan(0);
      const state = () => page.evaluate(() => {
        const region = document.querySelector("[data-live]")!;
        const wide = [...region.querySelectorAll("*")].find((e) => e.scrollWidth > e.clientWidth + 20);
        return { same: (window as unknown as { __region?: Element }).__region === region, left: wide?.scrollLeft ?? 0 };
      });
      // Two refreshes with nothing changed: the region is the same node, still scrolled.
      await page.waitForTimeout(6_500);
      expect(await state()).toMatchObject({ same: true });
      expect((await state()).left).toBeGreaterThan(0);
      // A change: the region is swapped in, and keeps its scroll.
      const { id } = await jobs.enqueue("quick", { n: 71 }, later);
      await expect.poll(() => page.locator(`a[href$="/jobs/${id}"]`).count(), LIVE).toBe(1);
      expect(await state()).toMatchObject({ same: false });
      expect((await state()).left).toBeGreaterThan(0);
      // The pointer resting on a row's link: a new row waits until it moves away (a row moving under it took the click).
      await page.evaluate(() => void ((window as unknown as { __region?: Element }).__region = document.querySelector("[data-live]")!));
      await page.locator(`a[href$="/jobs/${id}"]`).hover();
      const third = await jobs.enqueue("quick", { n: 72 }, later);
      await page.waitForTimeout(6_500);
      expect(await page.locator(`a[href$="/jobs/${third.id}"]`).count()).toBe(0);
      await page.mouse.move(0, 0);
      await expect.poll(() => page.locator(`a[href$="/jobs/${third.id}"]`).count(), LIVE).toBe(1);
    }
  });

  it("shows a job gone from an open page (its refresh answered 404), not the page as it was marked not up to date", async () => {
    const { id } = await jobs.enqueue("quick", { n: 9 }, { delayMs: 600_000 });
    await page.goto(url(`/jobs/${id}`));
    expect(await badge(page)).toBe("queued");
    // Gone with no history of it (history off, or past its retention).
    await h.rows(`DELETE FROM ${jobs.tables.queue} WHERE id = $1`, [id]);
    await expect.poll(() => page.locator("#gone").count(), LIVE).toBe(1);
    expect(await page.locator("body[data-stale]").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Cancel" }).count()).toBe(0);
  });

  it("marks an open page as not up to date while its refresh fails, and clears it once one succeeds", async () => {
    await page.goto(url("/"));
    expect(await page.locator("body[data-stale]").count()).toBe(0);
    serving = down;
    try {
      await expect.poll(() => page.locator("body[data-stale]").count(), LIVE).toBe(1);
    } finally {
      serving = jobs;
    }
    await expect.poll(() => page.locator("body[data-stale]").count(), LIVE).toBe(0);
  });

  it("marks the page when a refresh gets no answer at all, and says so when the session has ended", async () => {
    await page.goto(url("/"));
    // The server gone (the connection refused): the fetch itself fails.
    await page.route(/\/dashboard\//, (route) => (route.request().headers()["x-pgtick-live"] ? route.abort("connectionrefused") : route.continue()));
    try {
      await expect.poll(() => page.locator("body[data-stale]").count(), LIVE).toBe(1);
    } finally {
      await page.unroute(/\/dashboard\//);
    }
    await expect.poll(() => page.locator("body[data-stale]").count(), LIVE).toBe(0);
    // A refresh that gets no answer (a stalled database holds it): marked after two refreshes' time, and polled again after.
    let held = 0;
    await page.route(/\/dashboard\//, (route) => (route.request().headers()["x-pgtick-live"] ? void held++ : route.continue()));
    try {
      // The next refresh (3 s), then two refreshes' time (6 s) without an answer.
      await expect.poll(() => page.locator("body[data-stale]").count(), { ...LIVE, timeout: 15_000 }).toBe(1);
      await expect.poll(() => held, { ...LIVE, timeout: 10_000 }).toBeGreaterThan(1);
    } finally {
      await page.unroute(/\/dashboard\//);
    }
    await expect.poll(() => page.locator("body[data-stale]").count(), LIVE).toBe(0);
    // Logged out elsewhere: the next refresh is sent to the login; the page stops and says why.
    const other = await browser.newContext();
    const second = await other.newPage();
    try {
      await other.addCookies(await page.context().cookies());
      await second.goto(url("/"));
      await second.getByRole("button", { name: "Log out" }).click();
      await expect.poll(() => page.locator("body[data-ended]").count(), LIVE).toBe(1);
      const banner = await page.evaluate(() => getComputedStyle(document.body, "::before").content);
      expect(banner).toContain("the session has ended");
    } finally {
      await other.close();
    }
    // Log in again for what follows.
    await page.goto(url("/login"));
    await page.getByLabel("Dashboard password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.waitForURL(url("/"));
  });

  it("after a refused Cancel, shows the job at its own address and keeps it live, not the action's", async () => {
    const { id } = await jobs.enqueue("held", { n: 7 });
    await page.goto(url(`/jobs/${id}`));
    expect(await badge(page)).toBe("queued");
    const ran = tick();
    await expect.poll(() => jobs.get(id).then((j) => j?.status)).toBe("running");
    // The form on the page still offers Cancel: the tick took the job meanwhile.
    await page.getByRole("button", { name: "Cancel this job" }).click();
    await expect.poll(() => page.locator("[role=alert]").textContent()).toContain("A tick is running this job now");
    expect(page.url()).toBe(url(`/jobs/${id}`));
    release();
    await expect.poll(() => badge(page), LIVE).toBe("succeeded");
    expect((await ran).succeeded).toBe(1);
  });
});
