// The dashboard on a 390 px phone screen in Chromium: the nav folds behind a Menu toggle, tables
// become stacked rows that keep every column on screen, and no page scrolls sideways, with long
// unbroken payloads and errors in the rows.
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createJobs, defineJob, memoryLogger, PermanentJobError } from "../src/index.js";
import { dashboardApp, launchBrowser, PASSWORD, screenshot, serve, type Served } from "./support/browser.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("dash_phone");
const waiting: Array<() => void> = [];
const LONG = "x".repeat(400);
// As long as a name may nearly be (128): every title, filter and cell showing it must wrap or shrink.
const SLOW = `billing.invoices.generate-monthly-statement-pdf.${"for-every-tenant-".repeat(4)}`.slice(0, 120);
const slow = defineJob({ name: SLOW, schema: z.object({ blob: z.string() }), handler: () => new Promise<void>((go) => waiting.push(go)) });
const broken = defineJob({
  name: "broken",
  schema: z.object({ blob: z.string() }),
  maxAttempts: 1,
  handler: (p) => {
    throw new PermanentJobError(`refused ${p.blob}`);
  },
});
const jobs = createJobs({
  db: h.main,
  jobs: [slow, broken],
  schedules: [{ name: "nightly-cleanup-with-a-long-name", cron: "0 3 * * *", timezone: "America/Argentina/Buenos_Aires", job: "broken", payload: { blob: LONG } }],
  settings: { leaseMarginMs: 1_000 },
  logger: memoryLogger(),
});
const W = 390;

let server: Served;
let browser: Browser;
let phone: BrowserContext;
let p: Page;
let ticking: Promise<unknown>;
const url = (path: string) => `${server.url}/dashboard${path}`;
const ids = { running: "", delayed: "", dead: "" };

beforeAll(async () => {
  server = await serve(dashboardApp(jobs).fetch);
  browser = await launchBrowser();
  phone = await browser.newContext({ viewport: { width: W, height: 844 }, isMobile: true, hasTouch: true });
  phone.setDefaultTimeout(8_000);
  p = await phone.newPage();

  ids.dead = (await jobs.enqueue("broken", { blob: LONG })).id;
  expect((await jobs.tick({ budgetMs: 5_000 })).deadLettered).toBe(1);
  ids.running = (await jobs.enqueue(SLOW, { blob: LONG })).id;
  ticking = jobs.tick({ budgetMs: 20_000 });
  while ((await jobs.get(ids.running))?.status !== "running") await sleep(20);
  ids.delayed = (await jobs.enqueue(SLOW, { blob: LONG }, { delayMs: 3_600_000, idempotencyKey: LONG.slice(0, 200) })).id;
});

afterAll(async () => {
  waiting.splice(0).forEach((go) => go());
  await ticking;
  await browser?.close();
  await server?.close();
});

const fits = async (name: string) => {
  expect(await p.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(W);
  await screenshot(p, `phone-${name}`);
};

describe("the dashboard at 390 px", () => {
  it("does not scroll sideways on any page, logged out or in", async () => {
    await p.goto(url("/login"));
    await fits("login");
    await p.getByLabel("Dashboard password").fill(PASSWORD);
    await p.getByRole("button", { name: "Log in" }).click();
    await p.waitForURL(url("/"));
    const pages: Array<[string, string]> = [
      ["/", "overview"],
      ["/?range=7d", "overview-7d"],
      ["/jobs", "jobs"],
      [`/jobs/${ids.running}`, "job-running"],
      [`/jobs/${ids.delayed}`, "job-delayed"],
      [`/jobs/${ids.dead}`, "job-dead"],
      [`/jobs/${crypto.randomUUID()}`, "job-unknown"],
      ["/dead-letters", "dead-letters"],
      [`/dead-letters/${ids.dead}`, "dead-letter"],
      ["/schedules", "schedules"],
      ["/nothing-here", "not-found"],
    ];
    for (const [path, name] of pages) {
      await p.goto(url(path));
      await fits(name);
    }
  });

  it("folds the nav behind a Menu toggle that opens it", async () => {
    await p.goto(url("/jobs"));
    const nav = p.getByRole("navigation", { name: "Dashboard" });
    expect(await nav.getByRole("link", { name: "Dead letters" }).isVisible()).toBe(false);
    // The header is one row: brand, Menu and Log out side by side.
    const header = await p.locator("header.top").boundingBox();
    expect(header!.height).toBeLessThan(70);
    await p.locator("label[for=menu]").click();
    expect(await nav.getByRole("link", { name: "Dead letters" }).isVisible()).toBe(true);
    await nav.getByRole("link", { name: "Dead letters" }).click();
    await p.waitForURL(url("/dead-letters"));
    expect(await p.getByRole("heading", { level: 1 }).textContent()).toBe("Dead letters");
  });

  it("shows every column of the jobs and dead letters tables on screen, as stacked rows", async () => {
    const onScreen = async (text: string | RegExp) => {
      const box = await p.locator("main tbody").getByText(text).first().boundingBox();
      expect(box, String(text)).not.toBeNull();
      expect(box!.x).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, String(text)).toBeLessThanOrEqual(W);
    };
    await p.goto(url("/jobs"));
    for (const label of ["Attempt: ", "Priority: ", "Payload: ", "Last error: ", "When: "]) {
      const cells = p.locator(`main td[data-label="${label.slice(0, -2)}"]`);
      expect(await cells.count()).toBe(2);
      const box = await cells.first().boundingBox();
      expect(box!.x + box!.width, label).toBeLessThanOrEqual(W);
      expect(await cells.first().isVisible()).toBe(true);
    }
    await onScreen("running");
    await p.goto(url("/dead-letters"));
    for (const label of ["Attempts", "Died", "Error"]) {
      const cell = p.locator(`main td[data-label="${label}"]`).first();
      expect(await cell.isVisible(), label).toBe(true);
      const box = await cell.boundingBox();
      expect(box!.x + box!.width, label).toBeLessThanOrEqual(W);
    }
    const replay = p.getByRole("button", { name: /^Replay broken/ });
    expect(await replay.isVisible()).toBe(true);
    const box = await replay.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(W);
    expect(await p.getByRole("button", { name: "Replay selected" }).isVisible()).toBe(true);
  });
});
