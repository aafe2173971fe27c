import { context, metrics, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type AnyJob, createJobs, type Db, defineJob, defineObserver, isJobsError, memoryLogger, PermanentJobError, silentLogger } from "../src/index.js";
import type { Observer } from "../src/observe/observer.js";
import { asJobsModule } from "../src/module/jobs-module.js";
import { openTelemetry } from "../src/otel/index.js";
import { harness, sleep } from "./support/harness.js";

const h = await harness("otel");

// Made before any SDK is registered: the observer must look the global providers up at each tick.
const observer = openTelemetry();
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
const exported = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exported)] });
trace.setGlobalTracerProvider(provider);
const app = provider.getTracer("app");

let queues = 0;
/** A queue of its own tables (its prefix tells its spans and metrics apart), observed by `observe` (hooks of a test's own are wired here). */
const queue = async <const J extends readonly AnyJob[]>(jobs: J, observe: Observer = observer) => {
  const logger = memoryLogger();
  const q = createJobs({ db: h.main, jobs, settings: { tablePrefix: `o${++queues}_`, leaseMarginMs: 1_000 }, logger, random: () => 0.5, observer: defineObserver(observe) });
  await q.migrate();
  return Object.assign(q, { logs: logger.entries });
};
const spansOf = (prefix: string) => exported.getFinishedSpans().filter((s) => s.attributes["pgtick.queue"] === prefix);
const ticksOf = (prefix: string) => spansOf(prefix).filter((s) => s.name === "pgtick.tick");
const runsOf = (prefix: string) => spansOf(prefix).filter((s) => s.name.startsWith("pgtick.run "));
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe("OpenTelemetry spans", () => {
  it("makes a tick a span and each run a child span with the job's name, id, attempt, outcome and duration", async () => {
    const greet = defineJob({ name: "greet", schema: z.object({ name: z.string() }), maxAttempts: 3, handler: () => {} });
    const jobs = await queue([greet]);
    const a = await jobs.enqueue("greet", { name: "Ada" }, { correlationId: "req-1" });
    const b = await jobs.enqueue("greet", { name: "Bob" });
    const report = await jobs.tick({ budgetMs: 10_000 });
    expect(report).toMatchObject({ claimed: 2, succeeded: 2 });

    const [tick, ...rest] = ticksOf(jobs.tables.prefix);
    expect(rest).toEqual([]);
    expect(tick!.kind).toBe(SpanKind.INTERNAL);
    expect(tick!.status.code).toBe(SpanStatusCode.UNSET);
    expect(tick!.attributes).toMatchObject({
      "pgtick.tick.claimed": 2, "pgtick.tick.succeeded": 2, "pgtick.tick.retried": 0, "pgtick.tick.unstarted": 0, "pgtick.tick.statements": report.statements,
      "pgtick.tick.budget_ms": 10_000, "pgtick.tick.handoff": false,
      // The first tick of the minute counted the queue: both were due.
      "pgtick.queue.due": 2, "pgtick.queue.running": 0,
    });
    const runs = runsOf(jobs.tables.prefix);
    expect(runs.map((r) => r.attributes["pgtick.job.id"]).sort()).toEqual([a.id, b.id].sort());
    for (const run of runs) {
      expect(run.name).toBe("pgtick.run greet");
      expect(run.kind).toBe(SpanKind.CONSUMER);
      expect(run.spanContext().traceId).toBe(tick!.spanContext().traceId);
      expect(parentOf(run)).toBe(tick!.spanContext().spanId);
      expect(run.status.code).toBe(SpanStatusCode.UNSET);
      expect(run.attributes).toMatchObject({ "pgtick.job.name": "greet", "pgtick.run.attempt": 1, "pgtick.run.max_attempts": 3, "pgtick.run.outcome": "succeeded" });
      expect(run.attributes["pgtick.run.duration_ms"]).toEqual(expect.any(Number));
      expect(run.links).toEqual([]);
    }
    expect(runs.find((r) => r.attributes["pgtick.job.id"] === a.id)!.attributes["pgtick.job.correlation_id"]).toBe("req-1");
    expect(runs.find((r) => r.attributes["pgtick.job.id"] === b.id)!.attributes).not.toHaveProperty("pgtick.job.correlation_id");
  });

  it("records a failure on the run's span: the exception, status ERROR, and what became of the attempt", async () => {
    const flaky = defineJob({ name: "flaky", schema: z.object({}), maxAttempts: 2, backoff: { baseMs: 0 }, handler: () => { throw new Error("upstream 503"); } });
    const doomed = defineJob({ name: "doomed", schema: z.object({}), handler: () => { throw new PermanentJobError("account deleted"); } });
    const jobs = await queue([flaky, doomed]);
    await jobs.enqueue("flaky", {});
    await jobs.enqueue("doomed", {});
    // The retry is due at once: the same tick runs it.
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ retried: 1, deadLettered: 2 });

    const runs = runsOf(jobs.tables.prefix);
    const flakyRuns = runs.filter((r) => r.attributes["pgtick.job.name"] === "flaky").sort((x, y) => Number(x.attributes["pgtick.run.attempt"]) - Number(y.attributes["pgtick.run.attempt"]));
    expect(flakyRuns.map((r) => [r.attributes["pgtick.run.attempt"], r.attributes["pgtick.run.outcome"], r.attributes["pgtick.dead_letter.reason"]]))
      .toEqual([[1, "retried", undefined], [2, "dead_lettered", "exhausted"]]);
    for (const run of flakyRuns) {
      expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: "Error: upstream 503" });
      expect(run.events).toHaveLength(1);
      expect(run.events[0]!.name).toBe("exception");
      expect(run.events[0]!.attributes).toMatchObject({ "exception.type": "Error", "exception.message": "upstream 503" });
      expect(String(run.events[0]!.attributes!["exception.stacktrace"])).toContain("otel.test.ts");
    }
    const permanent = runs.find((r) => r.attributes["pgtick.job.name"] === "doomed")!;
    expect(permanent.attributes).toMatchObject({ "pgtick.run.outcome": "dead_lettered", "pgtick.dead_letter.reason": "permanent" });
    expect(permanent.status).toEqual({ code: SpanStatusCode.ERROR, message: "PermanentJobError: account deleted" });
    // The ticks themselves did not fail.
    for (const tick of ticksOf(jobs.tables.prefix)) expect(tick.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("clips a failure's text on the span as the run's history does (a 2,000,000-character message made a span an exporter refuses)", async () => {
    const huge = defineJob({ name: "huge", schema: z.object({}), maxAttempts: 1, handler: () => { throw new Error(`x${"y".repeat(2_000_000)}`); } });
    const jobs = await queue([huge]);
    await jobs.enqueue("huge", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 1 });
    const [run] = runsOf(jobs.tables.prefix);
    expect(run!.status.message!.length).toBeLessThanOrEqual(4_000);
    expect(run!.status.message).toMatch(/^Error: xyyy.*…$/);
    expect(String(run!.events[0]!.attributes!["exception.message"]).length).toBeLessThanOrEqual(4_000);
    expect(run!.events[0]!.attributes).toMatchObject({ "exception.type": "Error" });
    expect(String(run!.events[0]!.attributes!["exception.stacktrace"]).length).toBeLessThanOrEqual(16_000);
  });

  it("ends a run the deadline cut short as requeued, from the final statement's result", async () => {
    const patient = defineJob({
      name: "patient",
      schema: z.object({}),
      handler: (_p, ctx) => new Promise<void>((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })),
    });
    const jobs = await queue([patient]);
    const { id } = await jobs.enqueue("patient", {});
    expect(await jobs.tick({ budgetMs: 400, claimCutoffMs: 100 })).toMatchObject({ claimed: 1, requeued: 1, requeuedIds: [id] });
    const [run, ...others] = runsOf(jobs.tables.prefix);
    expect(others).toEqual([]);
    expect(run!.attributes).toMatchObject({ "pgtick.job.id": id, "pgtick.run.outcome": "requeued" });
    expect(run!.status.code).toBe(SpanStatusCode.UNSET);
    expect(ticksOf(jobs.tables.prefix)[0]!.attributes).toMatchObject({ "pgtick.tick.requeued": 1 });
  });

  it("gives a requeued run the duration its history has, however long the final statement takes (it counted to the final statement's answer)", async () => {
    const patient = defineJob({
      name: "patient",
      schema: z.object({}),
      handler: (_p, ctx) => new Promise<void>((_resolve, reject) => ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true })),
    });
    // The final statement (the one that requeues) answers 600 ms late, as a busy database's would.
    const slow: Db = { query: async (text, params, o) => (/requeued AS \(/.test(text) && (await sleep(600)), h.db.query(text, params, o)) };
    const jobs = createJobs({ db: slow, jobs: [patient], settings: { tablePrefix: `o${++queues}_`, leaseMarginMs: 1_000 }, logger: silentLogger, observer });
    await jobs.migrate();
    const { id } = await jobs.enqueue("patient", {});
    expect(await jobs.tick({ budgetMs: 400, claimCutoffMs: 100 })).toMatchObject({ requeued: 1 });
    const [run] = runsOf(jobs.tables.prefix);
    const [history] = await h.rows<{ duration_ms: number }>(`SELECT duration_ms FROM ${jobs.tables.runs} WHERE job_id = $1`, [id]);
    expect(run!.attributes["pgtick.run.duration_ms"]).toBe(history!.duration_ms);
    expect(history!.duration_ms).toBeLessThan(600);
  });

  it("ends a run whose write the fence refused (another tick took the job over) as lease_lost", async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = defineJob({ name: "slow", schema: z.object({}), handler: async () => (started(), await gate) });
    const jobs = await queue([slow]);
    const { id } = await jobs.enqueue("slow", {});
    const ticking = jobs.tick({ budgetMs: 10_000 });
    await running;
    await h.rows(`UPDATE ${jobs.tables.queue} SET lease_owner = gen_random_uuid() WHERE id = $1`, [id]);
    release();
    expect(await ticking).toMatchObject({ claimed: 1, succeeded: 0, leaseLost: 1 });
    const [run] = runsOf(jobs.tables.prefix);
    expect(run!.attributes).toMatchObject({ "pgtick.job.id": id, "pgtick.run.outcome": "lease_lost" });
    expect(run!.status).toMatchObject({ code: SpanStatusCode.ERROR, message: expect.stringContaining("lease lost") });
  });

  it("ends a failed tick's span as an error, and the runs no statement could settle as lease_lost", async () => {
    const quick = defineJob({ name: "quick", schema: z.object({}), handler: () => {} });
    const setup = await queue([quick]);
    await setup.enqueue("quick", {});
    let statements = 0;
    // The claim goes through; every statement after it fails, as a dropped connection would.
    const failing: Db = {
      query: <R,>(text: string, params?: readonly unknown[]) => (++statements >= 2 ? Promise.reject(new Error("connection reset")) : h.db.query<R>(text, params)),
    };
    const jobs = createJobs({ db: failing, jobs: [quick], settings: { tablePrefix: setup.settings.tablePrefix }, logger: silentLogger, observer });
    await expect(jobs.tick({ budgetMs: 5_000 })).rejects.toThrow("connection reset");
    const [tick] = ticksOf(jobs.tables.prefix);
    expect(tick!.status).toEqual({ code: SpanStatusCode.ERROR, message: "Error: connection reset" });
    expect(tick!.events.map((e) => e.name)).toEqual(["exception"]);
    expect(tick!.attributes).toMatchObject({ "pgtick.tick.claimed": 1 });
    const [run] = runsOf(jobs.tables.prefix);
    expect(run!.attributes).toMatchObject({ "pgtick.run.outcome": "lease_lost" });
    expect(run!.status).toEqual({ code: SpanStatusCode.ERROR, message: "Error: connection reset" });
    expect(run!.endTime[0]).toBeGreaterThan(0);
  });

  it("gives a debounced job the traceparent of the request that enqueued it last", async () => {
    const digest = defineJob({ name: "digest", schema: z.object({ v: z.number() }), handler: () => {} });
    const jobs = await queue([digest]);
    const [first, second] = [app.startSpan("first"), app.startSpan("second")];
    const enqueueIn = (span: Span, v: number) => context.with(trace.setSpan(context.active(), span), () => jobs.enqueue("digest", { v }, { debounce: { key: "k", delayMs: 60_000 } }));
    const a = await enqueueIn(first, 1);
    const b = await enqueueIn(second, 2);
    expect(b).toMatchObject({ id: a.id, debounced: true });
    const { traceId, spanId } = second.spanContext();
    expect((await h.rows(`SELECT traceparent FROM ${jobs.tables.queue} WHERE id = $1`, [a.id]))[0]).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
  });

  it("links a run to the span that was active when its job was enqueued, through the stored traceparent, and a replay keeps it", async () => {
    const once = defineJob({ name: "once", schema: z.object({ n: z.number() }), maxAttempts: 1, handler: ({ n }) => { if (n < 0) throw new Error("negative"); } });
    const jobs = await queue([once]);
    const request = app.startSpan("POST /signup");
    const inRequest = trace.setSpan(context.active(), request);
    const [ok, bad] = await context.with(inRequest, () => jobs.enqueueMany([{ job: "once", payload: { n: 1 } }, { job: "once", payload: { n: -1 } }]));
    request.end();
    const untraced = await jobs.enqueue("once", { n: 2 });
    const { traceId, spanId } = request.spanContext();
    const stored = await h.rows<{ id: string; traceparent: string | null }>(`SELECT id, traceparent FROM ${jobs.tables.queue}`);
    expect(Object.fromEntries(stored.map((r) => [r.id, r.traceparent]))).toEqual({
      [ok!.id]: `00-${traceId}-${spanId}-01`, [bad!.id]: `00-${traceId}-${spanId}-01`, [untraced.id]: null,
    });

    // Ticked outside the request: the runs belong to the tick's trace and link back to the request.
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 2, deadLettered: 1 });
    const byId = new Map(runsOf(jobs.tables.prefix).map((r) => [r.attributes["pgtick.job.id"], r]));
    for (const id of [ok!.id, bad!.id]) {
      const run = byId.get(id)!;
      expect(run.spanContext().traceId).not.toBe(traceId);
      expect(run.links).toHaveLength(1);
      expect(run.links[0]!.context).toMatchObject({ traceId, spanId, isRemote: true });
    }
    expect(byId.get(untraced.id)!.links).toEqual([]);

    // The dead letter keeps the traceparent, and its replay's run links to the same request.
    expect((await h.rows(`SELECT traceparent FROM ${jobs.tables.deadLetters} WHERE id = $1`, [bad!.id]))[0]).toEqual({ traceparent: `00-${traceId}-${spanId}-01` });
    const replayed = await jobs.deadLetters.replay(bad!.id, { payload: { n: 3 } });
    exported.reset();
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    const [again] = runsOf(jobs.tables.prefix);
    expect(again!.attributes["pgtick.job.id"]).toBe(replayed.id);
    expect(again!.links[0]!.context).toMatchObject({ traceId, spanId });
  });

  it("links a schedule occurrence's run to the tick that enqueued it, and a run-now's to the span that asked for it", async () => {
    const report = defineJob({ name: "report", schema: z.object({}), handler: () => {} });
    const clock = { t: Date.parse("2024-05-01T09:59:30Z") };
    const jobs = createJobs({
      db: h.main, jobs: [report], settings: { tablePrefix: `o${++queues}_`, leaseMarginMs: 1_000 }, logger: silentLogger, observer,
      schedules: [{ name: "hourly", cron: "0 * * * *", job: "report", payload: {} }], scheduleOptions: { now: () => new Date(clock.t) },
    });
    await jobs.migrate();
    await jobs.tick({ budgetMs: 5_000 });
    clock.t = Date.parse("2024-05-01T10:00:05Z");
    exported.reset();
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
    const [tick] = ticksOf(jobs.tables.prefix);
    const [run] = runsOf(jobs.tables.prefix);
    expect(run!.links.map((l) => l.context.spanId)).toEqual([tick!.spanContext().spanId]);

    const request = app.startSpan("POST /schedules/hourly/run");
    const { id } = await context.with(trace.setSpan(context.active(), request), () => jobs.schedules.run("hourly"));
    request.end();
    exported.reset();
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ succeeded: 1 });
    const [manual] = runsOf(jobs.tables.prefix);
    expect(manual!.attributes["pgtick.job.id"]).toBe(id);
    expect(manual!.links[0]!.context).toMatchObject({ traceId: request.spanContext().traceId, spanId: request.spanContext().spanId });
  });

  it("runs the handler inside its run's span, so the handler's own spans nest under it, across awaits", async () => {
    const seen: { active?: string; child?: Span } = {};
    const mail = defineJob({
      name: "mail",
      schema: z.object({}),
      handler: async (_p, ctx) => {
        await ctx.db.query("SELECT 1");
        seen.active = trace.getActiveSpan()?.spanContext().spanId;
        await app.startActiveSpan("smtp send", async (span) => {
          await sleep(5);
          seen.child = span;
          span.end();
        });
      },
    });
    const jobs = await queue([mail]);
    await jobs.enqueue("mail", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    const [run] = runsOf(jobs.tables.prefix);
    expect(seen.active).toBe(run!.spanContext().spanId);
    const child = exported.getFinishedSpans().find((s) => s.name === "smtp send" && s.spanContext().spanId === seen.child!.spanContext().spanId)!;
    expect(parentOf(child)).toBe(run!.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(run!.spanContext().traceId);
  });

  it("makes the tick a child of the span active when it starts (a platform's request span)", async () => {
    const jobs = await queue([]);
    const cron = app.startSpan("GET /api/tick");
    const report = await context.with(trace.setSpan(context.active(), cron), () => jobs.tick({ budgetMs: 1_000 }));
    cron.end();
    // An idle tick stays one statement with an observer.
    expect(report.statements).toBe(1);
    const [tick] = ticksOf(jobs.tables.prefix);
    expect(parentOf(tick!)).toBe(cron.spanContext().spanId);
    expect(tick!.spanContext().traceId).toBe(cron.spanContext().traceId);
  });
});

describe("openTelemetry's options", () => {
  it("refuses one it does not take or of the wrong kind (telemetry went to the global providers, or was lost after one warning)", () => {
    const bad: unknown[] = ["tracer", null, [], { tracerprovider: provider }, { tracerProvider: {} }, { tracerProvider: app }, { tracer: provider }, { meter: {} }, { meterProvider: 5 }];
    for (const options of bad) {
      expect(() => openTelemetry(options as never), String(bad.indexOf(options))).toThrow(/^openTelemetry\(\): /);
    }
    expect(() => openTelemetry({ tracerprovider: provider } as never)).toThrow('did you mean "tracerProvider"');
    expect(() => openTelemetry({ tracerProvider: provider, tracer: app, meterProvider: metrics.getMeterProvider() })).not.toThrow();
    expect(() => openTelemetry()).not.toThrow();
  });
});

describe("an observer of your own", () => {
  it("is wired by defineObserver; a plain object of hooks is refused when the queue is made (its wiring comes with defineObserver, so a bundle without an observer carries none of it)", () => {
    const hooks = { tick: () => undefined };
    // @ts-expect-error: TypeScript refuses a plain object of hooks too
    const plain = () => createJobs({ db: h.main, jobs: [], observer: hooks });
    const refused = (() => { try { plain(); } catch (e) { return e; } })();
    expect(isJobsError(refused) && refused.code).toBe("invalid_config");
    expect((refused as Error).message).toMatch(/an observer must come from openTelemetry\(\) or defineObserver\(hooks\)/);
    const wired = defineObserver(hooks);
    expect(wired).toBe(hooks);
    expect(() => createJobs({ db: h.main, jobs: [], observer: wired })).not.toThrow();
    // A spread copy with a hook of one's own is refused, not wired to the hooks it copied (its own tick never ran).
    const spread = { ...openTelemetry(), tick: () => undefined };
    // @ts-expect-error: TypeScript refuses a spread copy too (the brand is a private member, which a spread leaves out)
    expect(() => createJobs({ db: h.main, jobs: [], observer: spread })).toThrow(/defineObserver/);
    expect(() => createJobs({ db: h.main, jobs: [], observer: defineObserver(spread) })).not.toThrow();
    // A jobs module exporting one is refused when it is loaded, saying what to use.
    expect(() => asJobsModule({ jobs: [], observer: { tick: () => undefined } })).toThrow(/exports `observer`, which must come from openTelemetry\(\) \(pgtick\/otel\) or defineObserver\(hooks\)/);
    expect(asJobsModule({ jobs: [], observer: openTelemetry() }).observer).toBeDefined();
    // A frozen object of hooks is wired through a copy (it threw a TypeError).
    expect(() => createJobs({ db: h.main, jobs: [], observer: defineObserver(Object.freeze({ tick: () => undefined })) })).not.toThrow();
  });
});

describe("an observer that fails", () => {
  it("never breaks an enqueue or a tick: it is logged once, the handler still runs once, a bad traceparent is not stored", async () => {
    let calls = 0;
    const broken: Observer = defineObserver({
      traceparent: () => "00-not-a-traceparent\u0000",
      tick: () => ({
        within: () => { throw new Error("within broke"); },
        run: () => ({ within: () => { throw new Error("run within broke"); }, end: () => { throw new Error("end broke"); } }),
        end: () => { throw new Error("tick end broke"); },
      }),
    });
    const count = defineJob({ name: "count", schema: z.object({}), handler: () => void calls++ });
    const jobs = await queue([count], broken);
    const { id } = await jobs.enqueue("count", {});
    expect((await h.rows(`SELECT traceparent FROM ${jobs.tables.queue} WHERE id = $1`, [id]))[0]).toEqual({ traceparent: null });
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, succeeded: 1 });
    expect(calls).toBe(1);

    const throwing = await queue([count], defineObserver({ traceparent: () => { throw new Error("no context"); }, tick: () => { throw new Error("no tick"); } }));
    await throwing.enqueue("count", {});
    expect(await throwing.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    expect(calls).toBe(2);
    for (const q of [jobs, throwing]) {
      const warnings = q.logs.filter((e) => e.msg.startsWith("observer failed"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: "warn" });
    }
    expect(jobs.logs.find((e) => e.msg.startsWith("observer failed"))).toMatchObject({ hook: "tick.within", error: "within broke" });
    expect(throwing.logs.find((e) => e.msg.startsWith("observer failed"))).toMatchObject({ hook: "traceparent", error: "no context" });
  });

  it("keeps what the handler returned when an observer's within drops its return value, and runs the handler once when within never calls it", async () => {
    const ends: string[] = [];
    let calls = 0;
    const fails = defineJob({
      name: "fails",
      schema: z.object({}),
      maxAttempts: 1,
      handler: async () => {
        calls++;
        await sleep(20);
        throw new PermanentJobError("charge failed");
      },
    });
    // A slip that is easy to make: the callback's result is not returned.
    const dropping = await queue([fails], {
      tick: () => ({ within: (fn) => (fn(), undefined as never), run: () => ({ within: (fn) => (fn(), undefined as never), end: (r) => void ends.push(r.outcome) }), end: () => {} }),
    });
    const { id } = await dropping.enqueue("fails", {});
    expect(await dropping.tick({ budgetMs: 10_000 })).toMatchObject({ claimed: 1, succeeded: 0, deadLettered: 1 });
    expect(await dropping.get(id)).toMatchObject({ status: "dead" });
    expect(ends).toEqual(["dead_lettered"]);
    expect(calls).toBe(1);
    expect(dropping.logs.filter((e) => e.msg.startsWith("observer failed"))).toHaveLength(1);

    // One that never calls it: the handler runs bare, once, even if within calls it later.
    let later: (() => unknown) | undefined;
    const ok = defineJob({ name: "ok", schema: z.object({}), handler: () => void calls++ });
    const skipping = await queue([ok], { tick: () => ({ run: () => ({ within: (fn) => ((later = fn), undefined as never), end: () => {} }), end: () => {} }) });
    await skipping.enqueue("ok", {});
    expect(await skipping.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    later?.();
    expect(calls).toBe(2);
  });
});
