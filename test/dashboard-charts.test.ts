// The overview's charts in Chromium, drawn from metrics and queue samples written directly (as
// the tick writes them): a labelled y-axis with its unit, per-job charts on one shared scale
// (a job with 1 run and a job with 3 no longer both fill the height), ranges, queue depth and
// oldest wait, and run-time percentiles from the duration histogram.
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardApp, launchBrowser, PASSWORD, screenshot, serve, type Served } from "./support/browser.js";
import { harness } from "./support/harness.js";

const h = await harness("dash_charts");
const jobs = h.make([]);

let server: Served;
let browser: Browser;
let page: Page;
const url = (path: string) => `${server.url}/dashboard${path}`;

/** Minutes ago, from the database's clock. */
const metric = (ago: number, job: string, succeeded: number, retried = 0, dead = 0, hist: number[] = Array(12).fill(0), max = 0) =>
  h.db.query(
    `INSERT INTO jobs_metrics (minute, job_name, succeeded, failed, retried, dead_lettered, duration_ms_max, duration_hist)
     VALUES (date_trunc('minute', now()) - $1::int * interval '1 minute', $2, $3::int, $4::int + $5::int, $4, $5, $6, $7::int[])`,
    [ago, job, succeeded, retried, dead, max, hist],
  );

/** Every labelled value of a chart's y-axis, bottom up, and the rendered heights of its plot and bars. */
const chart = (p: Page, id: string) =>
  p.locator(`#${id}`).evaluate((fig) => {
    const plot = fig.querySelector("svg.plot")!;
    return {
      unit: fig.querySelector(".u")!.textContent,
      ticks: [...fig.querySelectorAll("svg.ya text")].map((t) => t.textContent),
      axisLabel: fig.querySelector("svg.ya")!.getAttribute("aria-label"),
      max: Number(plot.getAttribute("data-max")),
      viewBox: plot.getAttribute("viewBox"),
      plotHeight: plot.getBoundingClientRect().height,
      bars: [...plot.querySelectorAll("rect")].map((r) => ({ x: r.getAttribute("x"), n: Number(r.getAttribute("data-n")), height: r.getBoundingClientRect().height })),
    };
  });

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

  await metric(5, "one", 1);
  await metric(5, "three", 2, 1);
  await metric(4, "three", 0, 0, 1);
  const hist = (counts: Record<number, number>) => Array.from({ length: 12 }, (_, i) => counts[i] ?? 0);
  // "one": 60 runs up to 100 ms, 40 up to 1 s; "three": all within 10 ms.
  await metric(3, "one", 0, 0, 0, hist({ 2: 60, 5: 40 }), 900);
  await metric(3, "three", 0, 0, 0, hist({ 0: 4 }), 7);
  await h.db.query(
    `INSERT INTO jobs_queue_minutes (minute, due, running, oldest_wait_ms) VALUES
       (date_trunc('minute', now()) - interval '3 minutes', 7, 2, 90000),
       (date_trunc('minute', now()) - interval '2 minutes', 1, 0, 4000)`,
  );
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe("overview charts", () => {
  it("label the y-axis with values and a unit, and draw every per-job chart on one shared maximum", async () => {
    await page.goto(url("/"));
    const all = await chart(page, "chart-all");
    expect(all.unit).toBe("jobs per minute");
    expect(all.ticks).toEqual(["0", "2", "4"]);
    expect(all.axisLabel).toBe("y-axis: jobs per minute, 0 to 4");
    expect(all.viewBox).toBe("0 0 600 150");
    expect(await page.locator("#chart-all figcaption").textContent()).toContain("3 succeeded · 1 retried or requeued · 1 dead-lettered");

    const one = await chart(page, "chart-job-one");
    const three = await chart(page, "chart-job-three");
    // One scale for both: the busier job's minute (3) sets it, rounded up to 4.
    expect([one.max, three.max]).toEqual([4, 4]);
    expect(one.ticks).toEqual(three.ticks);
    /** The rendered height of the stack at the first bucket with bars. */
    const firstStack = (c: typeof one) => c.bars.filter((b) => b.x === c.bars[0]!.x).reduce((n, b) => n + b.height, 0);
    for (const c of [one, three, all]) {
      for (const b of c.bars) expect(b.height / c.plotHeight).toBeCloseTo(b.n / c.max, 1);
    }
    expect(one.bars.map((b) => b.n)).toEqual([1]);
    // The 1-run minute is a third of the 3-run minute, not the same full height.
    expect(three.bars.map((b) => b.n)).toEqual([2, 1, 1]);
    expect(firstStack(three) / firstStack(one)).toBeCloseTo(3, 1);
    await screenshot(page, "30-charts");
  });

  it("offers 24 hours in 15-minute buckets and 7 days in 2-hour buckets, with the unit saying so", async () => {
    await page.goto(url("/"));
    await page.getByRole("link", { name: "24 hours" }).click();
    await page.waitForURL(url("/?range=24h"));
    let all = await chart(page, "chart-all");
    expect(all.unit).toBe("jobs per 15 minutes");
    expect(all.viewBox).toBe("0 0 960 150");
    expect(await page.getByRole("link", { name: "24 hours" }).getAttribute("aria-current")).toBe("page");
    await page.getByRole("link", { name: "7 days" }).click();
    await page.waitForURL(url("/?range=7d"));
    all = await chart(page, "chart-all");
    expect(all.unit).toBe("jobs per 2 hours");
    expect(all.viewBox).toBe("0 0 840 150");
    expect(all.bars.reduce((n, b) => n + b.n, 0)).toBe(5);
  });

  it("draws queue depth and the oldest wait over time, each on its own labelled axis", async () => {
    await page.goto(url("/"));
    const depth = await chart(page, "chart-depth");
    expect(depth.ticks).toEqual(["0", "5", "10"]);
    expect(depth.unit).toBe("jobs, highest per minute");
    expect(depth.bars.map((b) => b.n)).toEqual([2, 7, 1]);
    const wait = await chart(page, "chart-wait");
    expect(wait.ticks).toEqual(["0 ms", "1 min", "2 min"]);
    expect(wait.bars.map((b) => b.n)).toEqual([90_000, 4_000]);
    expect(await page.locator("#chart-wait rect title").first().textContent()).toMatch(/ UTC: 1\.5 min oldest wait$/);
  });

  it("gives each job's p50 and p95 run time from its histogram", async () => {
    await page.goto(url("/"));
    const rows = await page.locator("#durations tbody tr").evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(0, 5).map((td) => td.textContent)));
    expect(rows).toEqual([
      ["one", "100", "≤ 100 ms", "≤ 900 ms", "900 ms"],
      ["three", "4", "≤ 7 ms", "≤ 7 ms", "7 ms"],
    ]);
  });
});
