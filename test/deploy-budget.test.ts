// The arithmetic and switches the platform entrypoints share (pure: no database needed).
import { describe, expect, it } from "vitest";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "../scripts/build-worker.js";
import { isJobsError } from "../src/errors.js";
import {
  budgetFromLimit,
  invocationGraceMs,
  kickBudgetMs,
  kickEnabled,
  platformSettings,
  VERCEL_TICK,
  VERCEL_TICK_MAX_DURATION_S,
  WORKERS_SCHEDULED,
} from "../src/platform/budget.js";
import { coalesced, kickTarget, postTick, tickAnswered } from "../src/platform/kick.js";
import { tickLimits } from "../src/tick/limits.js";
import { vercelLimit } from "../src/platform/vercel-tick.js";

const configError = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    if (isJobsError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error("expected an error");
};

describe("the Vercel kick's target", () => {
  it("comes from the environment, never from a request: JOBS_KICK_URL, else this deployment's VERCEL_URL", () => {
    expect(kickTarget({ JOBS_KICK_URL: "https://jobs.example/api/tick", VERCEL_URL: "x.vercel.app" })).toBe("https://jobs.example/api/tick");
    expect(kickTarget({ VERCEL_URL: "my-app-abc123.vercel.app" })).toBe("https://my-app-abc123.vercel.app/api/tick");
    expect(kickTarget({})).toBeUndefined();
  });

  it("sends CRON_SECRET only there, and nothing without a target", async () => {
    const sent: string[] = [];
    const fetcher = (async (input: string | URL | Request) => {
      const req = input as Request;
      sent.push(`${req.url} ${req.headers.get("authorization")} ${req.headers.get("x-jobs-kick")}`);
      return new Response(JSON.stringify({ accepted: true }), { status: 202 });
    }) as typeof fetch;
    await postTick({ CRON_SECRET: "s" }, { kick: true }, fetcher);
    await postTick({ CRON_SECRET: "s", VERCEL_URL: "my-app.vercel.app" }, { kick: true }, fetcher);
    await postTick({ VERCEL_URL: "my-app.vercel.app" }, { kick: true }, fetcher);
    expect(sent).toEqual(["https://my-app.vercel.app/api/tick Bearer s 1"]);
  });
});

describe("a tick request's answer", () => {
  it("is a failure unless 2xx, saying the status and the start of the body (Workers' fan-out through SELF ignored a 401)", async () => {
    await expect(tickAnswered(new Response(JSON.stringify({ accepted: true }), { status: 202 }))).resolves.toBeUndefined();
    await expect(tickAnswered(new Response(JSON.stringify({ claimed: 0, capped: false, slot: null }), { status: 200 }))).resolves.toBeUndefined();
    const refused = new Response(JSON.stringify({ error: { code: "unauthorized", message: "the token is not valid: this route takes CRON_SECRET" } }), { status: 401 });
    await expect(tickAnswered(refused)).rejects.toThrow(/^the tick endpoint answered 401: .*this route takes CRON_SECRET/);
    await expect(postTick({ CRON_SECRET: "s", VERCEL_URL: "x.vercel.app" }, { kick: true }, (async () => new Response("busy", { status: 503 })) as typeof fetch)).rejects.toThrow("answered 503: busy");
  });

  it("is a failure when a 2xx is not a tick's answer: a page, a redirect to one, another function's 202 (a start that started no tick)", async () => {
    await expect(tickAnswered(new Response("<html>ok</html>", { status: 200 }))).rejects.toThrow(/^the tick endpoint answered 200, not as a tick does \(check JOBS_KICK_URL\): <html>/);
    await expect(tickAnswered(new Response("{}", { status: 202 }))).rejects.toThrow(/answered 202, not as a tick does/);
    await expect(tickAnswered(new Response(JSON.stringify({ ok: true }), { status: 200 }))).rejects.toThrow(/not as a tick does/);
    // A real redirect, from a real server: not followed to the page it names.
    const server = createServer((req, res) => {
      if (req.url === "/login") return void res.writeHead(200, { "content-type": "text/html" }).end("<form>login</form>");
      res.writeHead(302, { location: "/login" }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/tick`;
      await expect(postTick({ CRON_SECRET: "s", JOBS_KICK_URL: url }, { kick: true, async: true })).rejects.toThrow(/answered 302/);
    } finally {
      server.close();
    }
  });
});

describe("tick budget from the platform limit", () => {
  it("is the limit minus the margin on each platform by default", () => {
    expect(platformSettings({}, VERCEL_TICK).tickBudgetMs).toBe(50_000);
    expect(platformSettings({}, WORKERS_SCHEDULED).tickBudgetMs).toBe(25_000);
  });

  it("gives the statements half of the safety margin as configured as their grace, never more than JOBS_TICK_GRACE", () => {
    expect(invocationGraceMs({}, VERCEL_TICK, 5_000)).toBe(5_000);
    expect(invocationGraceMs({ JOBS_SAFETY_MARGIN: "1s" }, VERCEL_TICK, 5_000)).toBe(500);
    expect(invocationGraceMs({ JOBS_SAFETY_MARGIN: "4s" }, WORKERS_SCHEDULED, 5_000)).toBe(2_000);
    expect(invocationGraceMs({ JOBS_SAFETY_MARGIN: "30s" }, VERCEL_TICK, 5_000)).toBe(5_000);
  });

  it("reads JOBS_PLATFORM_LIMIT and JOBS_SAFETY_MARGIN as durations", () => {
    expect(platformSettings({ JOBS_PLATFORM_LIMIT: "5m", JOBS_SAFETY_MARGIN: "20s" }, VERCEL_TICK).tickBudgetMs).toBe(280_000);
  });

  it("never lets JOBS_PLATFORM_LIMIT raise the budget past the invocation's real deadline", () => {
    // Vercel's getDeadline() said 20 s are left in this invocation.
    const invocation = { ...VERCEL_TICK, limitMs: 20_000, hardLimitMs: 20_000 };
    expect(platformSettings({}, invocation).tickBudgetMs).toBe(10_000);
    expect(platformSettings({ JOBS_PLATFORM_LIMIT: "5m" }, invocation).tickBudgetMs).toBe(10_000);
    expect(platformSettings({ JOBS_PLATFORM_LIMIT: "15s" }, invocation).tickBudgetMs).toBe(5_000);
  });

  it("on Vercel, follows the invocation's deadline, also past the default maxDuration of 60 s", () => {
    const key = Symbol.for("@vercel/request-context");
    const global = globalThis as Record<symbol, unknown>;
    const before = global[key];
    try {
      expect(vercelLimit()).toEqual(VERCEL_TICK);
      global[key] = { get: () => ({ deadline: Date.now() + 300_000 }) };
      const budget = platformSettings({}, vercelLimit()).tickBudgetMs;
      expect(budget).toBeGreaterThan(289_000);
      expect(budget).toBeLessThanOrEqual(290_000);
      global[key] = { get: () => ({ deadline: Date.now() + 30_000 }) };
      expect(platformSettings({}, vercelLimit()).tickBudgetMs).toBeLessThanOrEqual(20_000);
    } finally {
      global[key] = before;
    }
  });

  it("refuses a safety margin under a second: the tick needs it to requeue", () => {
    expect(configError(() => platformSettings({ JOBS_SAFETY_MARGIN: "0" }, VERCEL_TICK)).message).toContain("JOBS_SAFETY_MARGIN must be at least 1000 ms");
  });

  it("refuses a JOBS_TICK_BUDGET under a second on a platform, as it refuses such a budget from the limit (60, read as 60 ms, dead-lettered jobs)", () => {
    for (const budget of ["60", "999"]) {
      expect(() => platformSettings({ JOBS_TICK_BUDGET: budget }, VERCEL_TICK)).toThrow(/JOBS_TICK_BUDGET must be at least 1000 ms on a platform/);
    }
    expect(platformSettings({ JOBS_TICK_BUDGET: "1s" }, VERCEL_TICK).tickBudgetMs).toBe(1_000);
  });

  it("lets JOBS_TICK_BUDGET lower the budget but never raise it past the limit minus the margin", () => {
    expect(platformSettings({ JOBS_TICK_BUDGET: "10s" }, WORKERS_SCHEDULED).tickBudgetMs).toBe(10_000);
    expect(platformSettings({ JOBS_TICK_BUDGET: "10m" }, WORKERS_SCHEDULED).tickBudgetMs).toBe(25_000);
  });

  it("keeps the claim cutoff within half the budget", () => {
    // Clamped where every tick's limits are decided, so a budget passed in code is clamped the same way.
    const s = platformSettings({ JOBS_PLATFORM_LIMIT: "3s", JOBS_SAFETY_MARGIN: "1s" }, WORKERS_SCHEDULED);
    expect([s.tickBudgetMs, tickLimits(s, {}).claimCutoffMs, tickLimits(s, { budgetMs: 1_000 }).claimCutoffMs]).toEqual([2_000, 1_000, 500]);
  });

  it("refuses a margin that leaves less than a second, naming the variable", () => {
    expect(configError(() => budgetFromLimit({ limitMs: 10_000, marginMs: 9_500 }))).toEqual({
      code: "invalid_config",
      message: "the platform limit (10000 ms) minus the safety margin (9500 ms) leaves 500 ms; a tick needs at least 1000 ms",
    });
    expect(configError(() => platformSettings({ JOBS_SAFETY_MARGIN: "soon" }, VERCEL_TICK))).toEqual({
      code: "invalid_config",
      message: 'JOBS_SAFETY_MARGIN must be a duration such as 30s, 2m or 1500 (milliseconds), at most 24 days, got "soon"',
    });
  });

  it("matches the maxDuration vercel.json gives the tick function", () => {
    const vercel = JSON.parse(readFileSync(join(ROOT, "vercel.json"), "utf8")) as { functions: Record<string, { maxDuration: number }> };
    expect(vercel.functions["api/tick.js"]?.maxDuration).toBe(VERCEL_TICK_MAX_DURATION_S);
  });
});

describe("the kick", () => {
  it("is on unless JOBS_KICK says off", () => {
    expect([undefined, "", "on", "1", "off", "OFF", "0", "false", "no"].map((v) => kickEnabled({ JOBS_KICK: v }))).toEqual([
      true, true, true, true, false, false, false, false, false,
    ]);
  });

  it("gets JOBS_KICK_BUDGET (default 10 s), never more than the platform budget", () => {
    expect(kickBudgetMs({}, 25_000)).toBe(10_000);
    expect(kickBudgetMs({ JOBS_KICK_BUDGET: "3s" }, 25_000)).toBe(3_000);
    expect(kickBudgetMs({ JOBS_KICK_BUDGET: "1m" }, 25_000)).toBe(25_000);
  });

  it("coalesces: kicks during a run share one rerun, and a failure is reported, not thrown", async () => {
    const runs: number[] = [];
    const errors: unknown[] = [];
    let release!: () => void;
    let n = 0;
    const kick = coalesced(async () => {
      const i = ++n;
      runs.push(i);
      if (i === 1) await new Promise<void>((r) => (release = r));
      if (i === 2) throw new Error("database down");
    }, (e) => errors.push(e));
    const first = kick();
    const during = [kick(), kick(), kick()];
    release();
    await Promise.all([first, ...during]);
    expect(runs).toEqual([1, 2]);
    expect(errors.map((e) => (e as Error).message)).toEqual(["database down"]);
    await kick();
    expect(runs).toEqual([1, 2, 3]);
  });

  it("on Workers, keeps each call's promise its own (a request kept alive on another's run was cancelled as hung) and starts again after a run that never ends", async () => {
    const runs: number[] = [];
    let release!: () => void;
    let n = 0;
    const kick = coalesced(async () => {
      const i = ++n;
      runs.push(i);
      // The first run never ends (its request was cancelled); the second waits to be released.
      if (i === 1) await new Promise<void>(() => {});
      if (i === 2) await new Promise<void>((r) => (release = r));
    }, () => {}, { join: false, staleAfterMs: 200 });
    void kick();
    expect(kick.busy()).toBe(true);
    // Settled at once, not the run's promise, and no second run while the first counts as going on.
    expect(await Promise.race([kick().then(() => "settled"), new Promise((r) => setTimeout(() => r("waiting"), 50))])).toBe("settled");
    expect(runs).toEqual([1]);
    // Before: the run that never ended held the kick for good; every later call only asked for a rerun.
    await new Promise((r) => setTimeout(r, 250));
    expect(kick.busy()).toBe(false);
    const second = kick();
    expect(runs).toEqual([1, 2]);
    void kick();
    release();
    await second;
    // The call made during the second run is its rerun.
    expect(runs).toEqual([1, 2, 3]);
  });
});
