// The run history's pages in Chromium: a run found by its correlation id, its page (output,
// ctx.log lines, the job's attempts as a timeline with the failed one's error and stack), Run
// again, bad search input, and the pages at 390 px.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineJob } from "../src/index.js";
import { dashboardApp, launchBrowser, PASSWORD, screenshot, serve, type Served } from "./support/browser.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("dash_runs");
const greet = defineJob({
  name: "greet",
  schema: z.object({ who: z.string() }),
  handler: ({ who }, ctx) => {
    ctx.log("info", "greeted", { who });
    return { greeting: `hi ${who}` };
  },
});
let flakes = 0;
const flaky = defineJob({
  name: "flaky",
  schema: z.object({}),
  maxAttempts: 3,
  backoff: { baseMs: 1, maxMs: 1 },
  handler: () => {
    if (flakes++ === 0) throw new Error("upstream timed out");
  },
});
const jobs = h.make([greet, flaky]);

let server: Served;
let browser: Browser;
let page: Page;
const url = (path: string) => `${server.url}/dashboard${path}`;

beforeAll(async () => {
  server = await serve(dashboardApp(jobs).fetch);
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
  await browser?.close();
  await server?.close();
});

describe("run history pages", () => {
  it("finds a run by its correlation id and shows its output and log lines", async () => {
    await jobs.enqueue("greet", { who: "ada" }, { correlationId: "req-7f3a" });
    await jobs.enqueue("greet", { who: "bob" }, { correlationId: "req-other" });
    expect((await jobs.tick({ budgetMs: 5_000 })).succeeded).toBe(2);

    await page.goto(url("/runs"));
    expect(await page.locator("#runs-list tbody tr").count()).toBe(2);
    await page.getByLabel("Correlation id").fill("req-7f3a");
    await page.getByRole("button", { name: "Search" }).click();
    await page.waitForURL(/correlationId=req-7f3a/);
    const rows = page.locator("#runs-list tbody tr");
    expect(await rows.count()).toBe(1);
    expect(await rows.textContent()).toContain("succeeded");
    await screenshot(page, "40-runs-search");

    await rows.getByRole("link", { name: "greet" }).click();
    await expect.poll(() => page.getByRole("heading", { level: 1 }).textContent()).toBe("Run of greet");
    expect(JSON.parse((await page.locator("#output").textContent())!)).toEqual({ greeting: "hi ada" });
    const log = await page.locator("#logs li").allTextContents();
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(/info greeted \{"who":"ada"\}$/);
    expect(await page.locator("#run").textContent()).toContain("req-7f3a");
    await screenshot(page, "41-run");

    // Run again: a new job with the same payload, shown on its own page.
    await page.getByRole("button", { name: "Run again" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("Queued a new job with the run's payload");
    const queued = await h.rows<{ payload: unknown; correlation_id: string }>(`SELECT payload, correlation_id FROM jobs_queue WHERE job_name = 'greet'`);
    expect(queued).toEqual([{ payload: { who: "ada" }, correlation_id: "req-7f3a" }]);
    expect(page.url()).toContain("/dashboard/jobs/");
    expect((await jobs.tick({ budgetMs: 5_000 })).succeeded).toBe(1);
  });

  it("shows a job's attempts as a timeline, the failed one with its error and stack", async () => {
    const { id } = await jobs.enqueue("flaky", {});
    for (let i = 0; i < 20 && (await jobs.get(id))?.status !== "succeeded"; i++) {
      await jobs.tick({ budgetMs: 2_000 });
      await sleep(5);
    }
    await page.goto(url(`/jobs/${id}`));
    expect(await page.locator("#job-status").textContent()).toBe("succeeded");
    const steps = await page.locator("#attempts li").allTextContents();
    expect(steps).toHaveLength(2);
    expect(steps[0]).toMatch(/^Attempt 1 retried .*upstream timed out$/);
    expect(steps[1]).toMatch(/^Attempt 2 succeeded /);
    await page.locator("#attempts").getByRole("link", { name: "Attempt 1" }).click();
    await expect.poll(() => page.locator("#run-error").textContent()).toContain("upstream timed out");
    expect(await page.locator("#run-stack").textContent()).toMatch(/at .*dashboard-runs\.test\.ts/);
    expect(await page.locator('#attempts li[aria-current="step"]').textContent()).toContain("Attempt 1");
    await screenshot(page, "42-run-failed");
  });

  it("says what is wrong with a bad search or an unknown run, never a 500", async () => {
    for (const [query, message] of [
      ["?since=yesterday", "since must be an ISO 8601 time"],
      ["?jobId=nope", "jobId must be a job id"],
      ["?outcome=exploded", "outcome must be one of"],
      ["?cursor=%00", "cursor is not one this API returned"],
    ] as const) {
      const res = await page.goto(url(`/runs${query}`));
      expect(res!.status()).toBe(400);
      expect(await page.getByRole("alert").textContent()).toContain(message);
    }
    // A date alone is a time as the API reads it (midnight UTC); the form's time without a zone is UTC.
    for (const query of ["?since=2024-01-01", "?until=2024-01-01T10:00"]) expect((await page.goto(url(`/runs${query}`)))!.status()).toBe(200);
    // A bookmarked time shows in its field, as UTC (it showed empty, and the next search dropped it).
    for (const [query, since] of [["?since=2026-12-07T19:47:00%2B02:00", "2026-12-07T17:47"], ["?since=2026-12-07", "2026-12-07T00:00"], ["?since=2026-12-07T10:00:30", "2026-12-07T10:00:30"]] as const) {
      await page.goto(url(`/runs${query}`));
      expect(await page.locator("#f-since").inputValue(), query).toBe(since);
      expect(await page.locator("#f-since").evaluate((e) => (e as HTMLInputElement).validity.valid)).toBe(true);
    }
    for (const id of ["abc", "99999999", "-1"]) {
      const res = await page.goto(url(`/runs/${id}`));
      expect(res!.status()).toBe(404);
    }
    const res = await page.request.post(url("/runs/99999999/rerun"), { form: { _csrf: await page.locator('input[name="_csrf"]').first().inputValue() }, headers: { origin: server.url } });
    expect(res.status()).toBe(404);
    expect(await res.text()).toContain("There is no such run");
  });

  it("fits a 390 px screen", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await page.context().storageState() });
    const p = await phone.newPage();
    const [run] = (await jobs.runs.list({ job: "flaky", outcome: "retried" })).items;
    for (const path of ["/runs", `/runs/${run!.id}`]) {
      await p.goto(url(path));
      expect(await p.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(390);
    }
    await screenshot(p, "43-phone-run");
    await phone.close();
  });
});
