// The browser dashboard suites' shared setup: the fixture jobs and one schedule on a database named
// after the test file, the dashboard served on 127.0.0.1, and Debian's Chromium with one page.
import { afterAll, expect } from "vitest";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { createJobs, memoryLogger } from "../../src/index.js";
import { dashboardApp, fixtureJobs, launchBrowser, PASSWORD, serve, type Served } from "./browser.js";
import { harness } from "./harness.js";

export const dashboardBrowserFixture = async (name: string) => {
  const h = await harness(name);
  const { state, defs } = fixtureJobs();
  // Built here rather than with h.make, to pass a schedule for the Schedules page.
  const jobs = createJobs({
    db: h.main,
    jobs: defs,
    schedules: [{ name: "new-year-sync", cron: "30 3 1 1 *", timezone: "Europe/London", job: "sync-account", payload: { account: "yearly" } }],
    settings: { leaseMarginMs: 1_000 },
    logger: memoryLogger(),
  });

  let server: Served | undefined;
  let browser: Browser | undefined;

  /** Serves the dashboard and opens a page in Chromium, for the test file's beforeAll. */
  const open = async (): Promise<{ server: Served; browser: Browser; context: BrowserContext; page: Page }> => {
    server = await serve(dashboardApp(jobs).fetch);
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    // Fail at the step that went wrong, well within the test's own timeout.
    context.setDefaultTimeout(8_000);
    const page = await context.newPage();
    return { server, browser, context, page };
  };

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const url = (path: string) => `${server!.url}/dashboard${path}`;

  /** Runs a tick the way the platform cron would, and waits for it. */
  const tick = () => jobs.tick({ budgetMs: 5_000 });

  /** Makes dead letters: enqueue while the handler is broken, then tick. */
  const kill = async (items: Array<{ job: "sync-account" | "send-email" | "note"; payload: Record<string, string> }>) => {
    state.broken = true;
    for (const i of items) await jobs.enqueueUnchecked([{ job: i.job, payload: i.payload }]);
    const report = await tick();
    expect(report.deadLettered).toBe(items.length);
  };

  /** Logs the page in, as the other browser suites do in their beforeAll (expect.poll works only in a test). */
  const login = async (p: Page) => {
    await p.goto(url("/login"));
    await p.getByLabel("Dashboard password").fill(PASSWORD);
    await p.getByRole("button", { name: "Log in" }).click();
    await p.waitForURL(url("/"));
  };

  return { h, state, jobs, open, url, tick, kill, login };
};
