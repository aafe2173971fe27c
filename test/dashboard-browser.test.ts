// The dashboard in a real browser: Debian's Chromium, driven by playwright-core,
// against the app served on 127.0.0.1 with a real PostgreSQL behind it. This file: the login,
// the overview and the dead letters; the Jobs and Schedules pages, who may act, and a phone
// screen are in dashboard-browser-jobs.test.ts.
import { beforeAll, describe, expect, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { deadCount, PASSWORD, queuedCount, screenshot } from "./support/browser.js";
import { dashboardBrowserFixture } from "./support/dashboard-browser-fixture.js";

const { h, state, open, url, tick, kill } = await dashboardBrowserFixture("dash_browser");

let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  ({ context, page } = await open());
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
});
