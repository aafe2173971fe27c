// The typed client where the wire could change what it was given or keep it waiting: values JSON
// writes as null, a wait whose poll is stuck on a locked table, polls the server fails in passing,
// and a base URL that names no route.
import { Hono } from "hono";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createClient, JobsApiError } from "../src/client/client.js";
import { JobsWaitError } from "../src/client/wait.js";
import { createApp } from "../src/http/index.js";
import { createJobs, defineJob, silentLogger } from "../src/index.js";
import { API_TOKENS, CRON_SECRET, NEW_TOKEN, serveOnLoopback } from "./http-support.js";
import { harness } from "./support/harness.js";

const h = await harness("client_edges");
const maybe = defineJob({ name: "maybe", schema: z.object({ n: z.number().nullable() }), output: z.object({ twice: z.number() }), handler: () => ({ twice: 2 }) });
const big = defineJob({ name: "big", schema: z.object({}), output: z.object({ s: z.string() }), handler: () => ({ s: "x".repeat(70_000) }) });
const jobList = [maybe, big] as const;
const jobs = createJobs({ db: h.main, jobs: jobList, logger: silentLogger });
const server = await serveOnLoopback(createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET } }));
afterAll(() => server.close());
const client = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN });
const queued = async () => Number((await h.rows<{ n: string }>(`SELECT count(*) AS n FROM jobs_queue`))[0]!.n);

describe("values JSON cannot carry", () => {
  it("refuses NaN, Infinity and an invalid Date in options and payloads, as the library does, and sends nothing", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ runAt: new Date(Number.NaN) }, "runAt"],
      [{ delayMs: Number.POSITIVE_INFINITY }, "delayMs"],
      [{ delayMs: Number.NaN }, "delayMs"],
      [{ priority: Number.NaN }, "priority"],
      [{ maxAttempts: Number.POSITIVE_INFINITY }, "maxAttempts"],
      [{ debounce: { key: "k", delayMs: Number.NaN } }, "debounce.delayMs"],
      [{ debounce: { key: "k", delayMs: 5, maxWaitMs: Number.POSITIVE_INFINITY } }, "debounce.maxWaitMs"],
    ];
    for (const [options, field] of bad) {
      const e = await client.enqueue("maybe", { n: 1 }, options).catch((x: unknown) => x);
      expect(e, field).toBeInstanceOf(JobsApiError);
      expect(e, field).toMatchObject({ status: 422, code: "invalid_options", details: { field } });
      // The field the library names for the same mistake.
      await expect(jobs.enqueue("maybe", { n: 1 }, options), field).rejects.toMatchObject({ code: "invalid_options", details: { field } });
    }
    const payload = await client.enqueue("maybe", { n: Number.NaN }).catch((x: unknown) => x);
    // An invalid Date in a payload is left alone, as the library leaves it (JSON writes null).
    expect(await client.enqueue("maybe", { n: new Date(Number.NaN) as unknown as number })).toMatchObject({ deduplicated: false });
    await h.rows(`DELETE FROM jobs_queue`);
    expect(payload).toMatchObject({ status: 422, code: "invalid_payload", details: { issues: [{ path: ["n"], code: "not_finite" }] } });
    const batch = await client.enqueueMany([{ job: "maybe", payload: { n: 1 } }, { job: "maybe", payload: { n: 2 }, delayMs: Number.NaN }]).catch((x: unknown) => x);
    expect(batch).toMatchObject({ code: "invalid_options", details: { index: 1, field: "delayMs" } });
    expect(await queued()).toBe(0);
    // The library refuses the same values.
    await expect(jobs.enqueue("maybe", { n: Number.NaN })).rejects.toMatchObject({ code: "invalid_payload" });
    await expect(jobs.enqueue("maybe", { n: 1 }, { delayMs: Number.NaN })).rejects.toMatchObject({ code: "invalid_options" });
  });

  it("refuses a payload thousands of levels deep as the library does, with the depth limit (a RangeError escaped, and the library said 'is not JSON')", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const deep = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = { a: v };
      return v;
    };
    for (const levels of [101, 5_000, 50_000]) {
      const sent = await client.enqueue("maybe", deep(levels) as { n: number }).catch((x: unknown) => x);
      expect(sent, String(levels)).toBeInstanceOf(JobsApiError);
      expect(sent, String(levels)).toMatchObject({ status: 422, code: "invalid_payload", message: "payload for maybe is nested deeper than 100 levels" });
      const edited = await client.deadLetters.replay(crypto.randomUUID(), { payload: deep(levels) }).catch((x: unknown) => x);
      expect(edited, String(levels)).toMatchObject({ code: "invalid_payload", message: "the edited payload is nested deeper than 100 levels" });
      const option = await client.enqueue("maybe", { n: 1 }, { debounce: deep(levels) } as never).catch((x: unknown) => x);
      expect(option, String(levels)).toMatchObject({ code: "invalid_options", details: { field: "debounce" } });
      await expect(jobs.enqueue("maybe", deep(levels) as { n: number })).rejects.toMatchObject({
        code: "invalid_payload",
        message: "payload for maybe is nested deeper than 100 levels",
      });
    }
    // A hundred levels are a payload (the schema then says what is wrong with it).
    const hundred = await client.enqueue("maybe", deep(99) as { n: number }).catch((x: unknown) => x);
    expect(hundred).toMatchObject({ code: "invalid_payload", details: { issues: [{ path: ["n"] }] } });
    expect(await queued()).toBe(0);
  });

  it("answers a batch that is not a list of items as the server does, with the item's index (it threw a TypeError of its own)", async () => {
    const send = client.enqueueMany as (items: unknown) => Promise<unknown>;
    for (const item of [undefined, null, 5, "x"]) {
      const e = await send([{ job: "maybe", payload: { n: 1 } }, item]).catch((x: unknown) => x);
      expect(e, String(item)).toBeInstanceOf(JobsApiError);
      expect(e, String(item)).toMatchObject({ code: "invalid_options", details: { index: 1 } });
    }
    for (const items of [null, undefined, {}]) {
      const e = await send(items).catch((x: unknown) => x);
      expect(e, String(items)).toBeInstanceOf(JobsApiError);
      expect((e as JobsApiError).status, String(items)).toBeGreaterThanOrEqual(400);
      expect((e as JobsApiError).status, String(items)).toBeLessThan(500);
    }
    expect(await queued()).toBe(0);
    // The library says the same of an item that is not an object.
    await expect((jobs.enqueueMany as (items: unknown) => Promise<unknown>)([undefined])).rejects.toMatchObject({ code: "invalid_options", details: { index: 0 } });
  });
});

describe("waitForResult", () => {
  it("ends at its timeout, and at its signal, while a poll is stuck on a locked table", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const { id } = await client.enqueue("maybe", { n: 1 });
    const locker = new pg.Client({ connectionString: h.url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE jobs_queue IN ACCESS EXCLUSIVE MODE");
      // Held for as long as the API's statements wait (15 s) the poll would answer 503 only then.
      let started = Date.now();
      const timedOut = await client.waitForResult(id, { timeoutMs: 700 }).catch((x: unknown) => x);
      expect(timedOut).toBeInstanceOf(JobsWaitError);
      expect(timedOut).toMatchObject({ code: "timeout" });
      expect(Date.now() - started).toBeLessThan(5_000);
      started = Date.now();
      const reason = new Error("the caller went away");
      const aborted = await client.waitForResult(id, { timeoutMs: 60_000, signal: AbortSignal.timeout(400) }).catch((x: unknown) => x);
      expect(aborted).toMatchObject({ name: "TimeoutError" });
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 300);
      expect(await client.waitForResult(id, { timeoutMs: 60_000, signal: controller.signal }).catch((x: unknown) => x)).toBe(reason);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
    }
  });

  it("polls again after an answer the server failed in passing (503), then returns the output", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const { id } = await client.enqueue("maybe", { n: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    let failures = 2;
    const flaky = createClient<typeof jobList>({
      baseUrl: server.url,
      token: NEW_TOKEN,
      fetch: (req) =>
        failures-- > 0
          ? Promise.resolve(Response.json({ error: { code: "unavailable", message: "the database did not answer" } }, { status: 503 }))
          : fetch(req),
    });
    expect(await flaky.waitForResult(id, { intervalMs: 10 })).toEqual({ twice: 2 });
    expect(failures).toBeLessThan(0);
    // A refusal that another poll cannot change ends the wait at once.
    const denied = createClient<typeof jobList>({ baseUrl: server.url, token: "not-a-token-of-this-server" });
    await expect(denied.waitForResult(id)).rejects.toMatchObject({ status: 401, code: "unauthorized" });
  });
});

describe("waitForResult's options", () => {
  it("returns a finished job's output whatever the timeout (0, negative, fractional, Infinity, past a timer's range), and with a signal where AbortSignal.any is missing", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const { id } = await client.enqueue("maybe", { n: 1 });
    await jobs.tick({ budgetMs: 5_000 });
    for (const timeoutMs of [0, -1, 0.1 * 3 * 1000, 1500.5, Number.POSITIVE_INFINITY, 5e9, 2 ** 31]) {
      expect(await client.waitForResult(id, { timeoutMs }), String(timeoutMs)).toEqual({ twice: 2 });
    }
    const saved = AbortSignal.any;
    Object.defineProperty(AbortSignal, "any", { value: undefined, configurable: true, writable: true });
    try {
      expect(await client.waitForResult(id, { signal: new AbortController().signal })).toEqual({ twice: 2 });
    } finally {
      Object.defineProperty(AbortSignal, "any", { value: saved, configurable: true, writable: true });
    }
  });

  it("ends at once on a failure that is no network's (a bug in a fetch wrapper), and a timeout after passing failures names the last", async () => {
    const { id } = await client.enqueue("maybe", { n: 1 });
    const buggy = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: () => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'x')")) });
    await expect(buggy.waitForResult(id, { timeoutMs: 60_000 })).rejects.toThrow(/reading 'x'/);
    const down = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: () => Promise.reject(new TypeError("fetch failed")) });
    const timedOut = await down.waitForResult(id, { timeoutMs: 300, intervalMs: 20 }).catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ code: "timeout" });
    expect((timedOut as Error).cause).toMatchObject({ message: "fetch failed" });
  });
});

describe("more that the client refuses or reports", () => {
  it("refuses a bigint before sending; polls no faster than every 50 ms; says an output too large to keep was not kept", async () => {
    let requests = 0;
    const counting = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: (request: Request) => (requests++, fetch(request)) });
    const e = await counting.enqueue("maybe", { n: 10n as unknown as number }).catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 422, code: "invalid_payload", details: { issues: [{ path: ["n"], code: "not_finite" }] } });
    // The same for an edited replay's payload.
    const replay = await counting.deadLetters.replay("00000000-0000-7000-8000-000000000000", { payload: { n: 1n } }).catch((x: unknown) => x);
    expect(replay).toMatchObject({ status: 422, code: "invalid_payload", message: "the edited payload holds a number JSON cannot hold (NaN, Infinity or a bigint)" });
    expect(requests).toBe(0);

    // A job no tick runs: a wait of 1 s with an interval of 0 polls at 50, 100, 200, 400 ms (it sent hundreds).
    const { id } = await client.enqueue("maybe", { n: 1 }, { delayMs: 60_000 });
    requests = 0;
    await expect(counting.waitForResult(id, { timeoutMs: 1_000, intervalMs: 0 })).rejects.toMatchObject({ code: "timeout" });
    expect(requests).toBeLessThanOrEqual(6);
    // An interval above 2 s stays as given: within 4.6 s, 2.5 s apart polls at 0 and 2.5 s (it fell back to 2 s: 0, 2.5 and 4.5 s;
    // a last poll may go out as the timeout ends, which this leaves out).
    const polled: number[] = [];
    const timed = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: (request: Request) => (polled.push(performance.now()), fetch(request)) });
    const from = performance.now();
    await expect(timed.waitForResult(id, { timeoutMs: 4_600, intervalMs: 2_500 })).rejects.toMatchObject({ code: "timeout" });
    expect(polled.filter((at) => at - from < 4_550)).toHaveLength(2);

    const large = await client.enqueue("big", {});
    await jobs.tick({ budgetMs: 5_000 });
    const truncated = await client.waitForResult(large.id, { timeoutMs: 5_000 }).catch((x: unknown) => x);
    expect(truncated).toBeInstanceOf(JobsWaitError);
    expect(truncated).toMatchObject({ code: "output_truncated", job: { status: "succeeded", outputTruncated: true } });
  });
});

describe("a base URL that names no route", () => {
  it("says so (no_route) instead of reporting the job missing", async () => {
    const { id } = await client.enqueue("maybe", { n: 1 });
    const wrong = createClient<typeof jobList>({ baseUrl: `${server.url}/v2`, token: NEW_TOKEN });
    await expect(wrong.get(id)).rejects.toMatchObject({ status: 404, code: "no_route" });
    await expect(wrong.runs.get(id)).rejects.toMatchObject({ code: "no_route" });
    await expect(wrong.waitForResult(id)).rejects.toMatchObject({ code: "no_route" });
    expect(await client.get(crypto.randomUUID())).toBeNull();
  });
});

describe("answers that are not the call's", () => {
  it("follows no redirect (a 301 would turn the enqueue into a GET of the job list), and refuses a success that is not an enqueue's", async () => {
    await h.rows(`DELETE FROM jobs_queue`);
    const app = createApp({ jobs, env: { JOBS_API_TOKEN: API_TOKENS, CRON_SECRET } });
    const moved = new Hono().all("*", (c) => (c.req.path.startsWith("/old/") ? c.redirect(c.req.url.replace("/old/", "/"), 301) : app.fetch(c.req.raw)));
    const mover = await serveOnLoopback(moved);
    try {
      const old = createClient<typeof jobList>({ baseUrl: `${mover.url}/old`, token: NEW_TOKEN });
      const e = await old.enqueue("maybe", { n: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(JobsApiError);
      expect(e).toMatchObject({ status: 301, code: "no_route", message: expect.stringMatching(/redirected POST .* to http/) });
      await expect(old.deadLetters.replayMany({ ids: [crypto.randomUUID()] })).rejects.toMatchObject({ status: 301, code: "no_route" });
      expect(await queued()).toBe(0);
    } finally {
      await mover.close();
    }
    const elsewhere = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: () => Promise.resolve(Response.json({ items: [], nextCursor: null })) });
    await expect(elsewhere.enqueue("maybe", { n: 1 })).rejects.toMatchObject({ code: "internal", message: expect.stringMatching(/not what enqueue answers/) });
    await expect(elsewhere.enqueueMany([{ job: "maybe", payload: { n: 1 } }])).rejects.toMatchObject({ code: "internal" });
    // A page of the job list has items too, not one per item sent.
    const page = createClient<typeof jobList>({
      baseUrl: server.url,
      token: NEW_TOKEN,
      fetch: () => Promise.resolve(Response.json({ items: [{ id: crypto.randomUUID(), job: "maybe", status: "queued" }], nextCursor: null })),
    });
    await expect(page.enqueueMany([1, 2, 3].map((n) => ({ job: "maybe" as const, payload: { n } })))).rejects.toMatchObject({ code: "internal" });
  });

  it("refuses an edited replay whose payload is undefined (JSON would drop it and the original would run) and a circular payload, sending nothing", async () => {
    let requests = 0;
    const counting = createClient<typeof jobList>({ baseUrl: server.url, token: NEW_TOKEN, fetch: (request: Request) => (requests++, fetch(request)) });
    const id = crypto.randomUUID();
    await expect(counting.deadLetters.replay(id, { payload: undefined })).rejects.toMatchObject({ status: 422, code: "invalid_payload", message: expect.stringMatching(/missing/) });
    const circular: Record<string, unknown> = { n: 1 };
    circular.self = circular;
    const e = await counting.enqueue("maybe", circular as { n: number }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(JobsApiError);
    expect(e).toMatchObject({ status: 422, code: "invalid_payload", message: expect.stringMatching(/cannot be sent as JSON/) });
    await expect(counting.deadLetters.replay(id, { payload: circular })).rejects.toMatchObject({ code: "invalid_payload" });
    expect(requests).toBe(0);
  });

  it("ends a wait at its timeout and at its signal even where the fetch given drops the request's signal (it waited for ever)", async () => {
    const { id } = await client.enqueue("maybe", { n: 1 }, { delayMs: 60_000 });
    let polls = 0;
    // A wrapper that forgets the signal, and a server that never answers its second poll.
    const deaf = createClient<typeof jobList>({
      baseUrl: server.url,
      token: NEW_TOKEN,
      fetch: (request: Request) => (++polls === 1 ? fetch(request.url, { headers: request.headers }) : new Promise<Response>(() => {})),
    });
    const started = Date.now();
    await expect(deaf.waitForResult(id, { timeoutMs: 1_500, intervalMs: 50 })).rejects.toMatchObject({ code: "timeout" });
    expect(Date.now() - started).toBeLessThan(3_000);
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error("stopped")), 200);
    await expect(deaf.waitForResult(id, { timeoutMs: 60_000, intervalMs: 50, signal: stop.signal })).rejects.toThrow("stopped");
  });

  it("ends a wait shorter than the first poll's grace at its timeout once the first poll is back", async () => {
    const { id } = await client.enqueue("maybe", { n: 1 }, { delayMs: 60_000 });
    let polls = 0;
    const stuck = createClient<typeof jobList>({
      baseUrl: server.url,
      token: NEW_TOKEN,
      // The first poll answers (queued); every later one hangs until aborted. One sent with its signal aborted
      // already (the timeout fell between the pause and the poll) is refused at once, as fetch refuses it.
      fetch: (request: Request) =>
        ++polls === 1
          ? fetch(request)
          : new Promise<Response>((_, reject) => {
              if (request.signal.aborted) return reject(request.signal.reason);
              request.signal.addEventListener("abort", () => reject(request.signal.reason), { once: true });
            }),
    });
    const started = Date.now();
    await expect(stuck.waitForResult(id, { timeoutMs: 300, intervalMs: 50 })).rejects.toMatchObject({ code: "timeout" });
    // The whole second of grace ran before (1,003 ms).
    expect(Date.now() - started).toBeLessThan(800);
    expect(polls).toBe(2);
  });
});
