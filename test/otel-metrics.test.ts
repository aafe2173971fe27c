import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { AggregationTemporality, type DataPoint, type Histogram, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Meter } from "@opentelemetry/api";
import { createJobs, defineJob, memoryLogger, silentLogger } from "../src/index.js";
import { openTelemetry } from "../src/otel/index.js";
import { harness } from "./support/harness.js";

const h = await harness("otel_metrics");

// No global SDK in this file: the providers are passed in, and only they may see anything.
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
// Exported only when flushed: the test decides when it reads.
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const observer = openTelemetry({ tracerProvider, meterProvider });

/** This queue's data points of each pgtick metric, as exported now. */
const exported = async (prefix: string) => {
  await reader.forceFlush();
  const scope = exporter.getMetrics().at(-1)!.scopeMetrics.find((s) => s.scope.name === "pgtick")!;
  return new Map(scope.metrics.map((m) => [m.descriptor.name, { unit: m.descriptor.unit, points: (m.dataPoints as DataPoint<unknown>[]).filter((p) => p.attributes["pgtick.queue"] === prefix) }]));
};

describe("OpenTelemetry metrics", () => {
  it("counts runs by job and outcome, records their durations, and gauges the queue at the first tick of the minute", async () => {
    const ok = defineJob({ name: "ok", schema: z.object({}), handler: () => new Promise<void>((resolve) => setTimeout(resolve, 50)) });
    const flaky = defineJob({ name: "flaky", schema: z.object({}), backoff: { baseMs: 60_000 }, handler: () => { throw new Error("down"); } });
    const jobs = createJobs({ db: h.main, jobs: [ok, flaky], settings: { tablePrefix: "m1_" }, logger: silentLogger, observer });
    await jobs.migrate();
    await jobs.enqueueMany([{ job: "ok", payload: {} }, { job: "ok", payload: {} }, { job: "flaky", payload: {} }, { job: "ok", payload: {}, delayMs: 60_000 }]);
    const report = await jobs.tick({ budgetMs: 10_000 });
    expect(report).toMatchObject({ succeeded: 2, retried: 1 });
    // A fresh queue: this tick was the first of its minute, and counted the three due jobs (not the delayed one).
    expect(report.queue).toMatchObject({ due: 3, running: 0, oldestWaitMs: expect.any(Number) });

    const m = await exported(jobs.tables.prefix);
    const byRun = (name: string) => Object.fromEntries(m.get(name)!.points.map((p) => [`${p.attributes["pgtick.job.name"]} ${p.attributes["pgtick.run.outcome"]}`, p.value]));
    expect(byRun("pgtick.runs")).toEqual({ "ok succeeded": 2, "flaky retried": 1 });
    expect(m.get("pgtick.run.duration")!.unit).toBe("ms");
    const durations = byRun("pgtick.run.duration") as Record<string, Histogram>;
    expect(durations["ok succeeded"]!.count).toBe(2);
    expect(durations["flaky retried"]!.count).toBe(1);
    // Two runs of about 50 ms each (a timer may fire a millisecond early).
    expect(durations["ok succeeded"]!.sum).toBeGreaterThanOrEqual(90);
    const gauge = (name: string) => m.get(name)!.points.map((p) => p.value);
    expect(gauge("pgtick.queue.due")).toEqual([3]);
    expect(gauge("pgtick.queue.running")).toEqual([0]);
    expect(gauge("pgtick.queue.oldest_wait")).toEqual([report.queue!.oldestWaitMs]);
    expect(m.get("pgtick.queue.oldest_wait")!.unit).toBe("ms");

    // The spans went to the provider passed in.
    expect(spans.getFinishedSpans().map((s) => s.name).sort()).toEqual(["pgtick.run flaky", "pgtick.run ok", "pgtick.run ok", "pgtick.tick"]);
  });

  it("counts the attempts of a tick that died, when a later tick reclaims them: lease_expired, or dead_lettered at the last attempt", async () => {
    const work = defineJob({ name: "work", schema: z.object({}), maxAttempts: 2, handler: () => {} });
    const logs = memoryLogger();
    const jobs = createJobs({ db: h.main, jobs: [work], settings: { tablePrefix: "m3_" }, logger: logs, observer });
    await jobs.migrate();
    const [again, last] = await jobs.enqueueMany([{ job: "work", payload: {} }, { job: "work", payload: {} }]);
    // As a tick killed mid-run leaves them: running, on leases that have expired.
    await h.main.query(
      `UPDATE ${jobs.tables.queue} SET status = 'running', lease_owner = gen_random_uuid(), lease_expires_at = now() - interval '1 second',
         attempt = CASE WHEN id = $1 THEN 1 ELSE 2 END WHERE id IN ($1, $2)`, [again!.id, last!.id]);
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ reclaimed: 2, deadLettered: 1, succeeded: 1 });
    const m = await exported(jobs.tables.prefix);
    const runs = Object.fromEntries(m.get("pgtick.runs")!.points.map((p) => [`${p.attributes["pgtick.job.name"]} ${p.attributes["pgtick.run.outcome"]}`, p.value]));
    expect(runs).toEqual({ "work lease_expired": 1, "work dead_lettered": 1, "work succeeded": 1 });
    // No duration is known for them: only the run this tick made has one.
    expect(m.get("pgtick.run.duration")!.points.map((p) => p.attributes["pgtick.run.outcome"])).toEqual(["succeeded"]);
    // Their log lines name the job too.
    expect(logs.entries.find((e) => e.msg === "expired lease reclaimed")).toMatchObject({ jobId: again!.id, jobName: "work" });
    expect(logs.entries.find((e) => e.msg === "job dead-lettered")).toMatchObject({ jobId: last!.id, jobName: "work", reason: "lease_expired" });
  });

  it("counts an attempt a live tick lost to a reclaim once, as lease_expired (it was lease_lost as well: two for one attempt)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const slow = defineJob({ name: "slow", schema: z.object({}), maxAttempts: 3, handler: async () => { if (++started === 1) await gate; } });
    const jobs = createJobs({ db: h.main, jobs: [slow], settings: { tablePrefix: "m4_" }, logger: silentLogger, observer });
    await jobs.migrate();
    await jobs.enqueue("slow", {});
    const first = jobs.tick({ budgetMs: 10_000 });
    await expect.poll(() => started, { timeout: 5_000 }).toBe(1);
    // Its lease runs out under it; another tick reclaims the job and runs it again.
    await h.main.query(`UPDATE ${jobs.tables.queue} SET lease_expires_at = now() - interval '1 second'`);
    expect(await jobs.tick({ budgetMs: 5_000 })).toMatchObject({ reclaimed: 1, succeeded: 1 });
    release();
    expect(await first).toMatchObject({ leaseLost: 1 });
    const m = await exported(jobs.tables.prefix);
    const runs = Object.fromEntries(m.get("pgtick.runs")!.points.map((p) => [`${p.attributes["pgtick.job.name"]} ${p.attributes["pgtick.run.outcome"]}`, p.value]));
    expect(runs).toEqual({ "slow lease_expired": 1, "slow succeeded": 1 });
    const { rows } = await h.main.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${jobs.tables.runs}`);
    expect(rows[0]!.n).toBe(2);
    // The span of the attempt its tick lost says so.
    expect(spans.getFinishedSpans().filter((s) => s.name === "pgtick.run slow").map((s) => s.attributes["pgtick.run.outcome"]).sort()).toEqual(["lease_lost", "succeeded"]);
  });
});

describe("a broken span processor", () => {
  it("costs the spans only: the run metrics are still recorded, a thrown non-Error's text is the span's status, and an unreadable error still ends its span", async () => {
    const failing = new BasicTracerProvider({
      spanProcessors: [{ onStart: () => {}, onEnd: () => { throw new Error("exporter misconfigured"); }, forceFlush: async () => {}, shutdown: async () => {} }],
    });
    const statuses: string[] = [];
    const seeing = new BasicTracerProvider({ spanProcessors: [{ onStart: () => {}, onEnd: (span) => void statuses.push(span.status.message ?? ""), forceFlush: async () => {}, shutdown: async () => {} }] });
    const ok = defineJob({ name: "ok", schema: z.object({}), handler: () => {} });
    const odd = defineJob({ name: "odd", schema: z.object({}), maxAttempts: 1, handler: () => { throw { message: "an object" }; } });
    class Unreadable extends Error {
      override get name(): string {
        throw new Error("name getter throws");
      }
    }
    const unreadable = defineJob({ name: "unreadable", schema: z.object({}), maxAttempts: 1, handler: () => { throw new Unreadable("inside"); } });
    const broken = createJobs({ db: h.main, jobs: [ok], settings: { tablePrefix: "m2_" }, logger: silentLogger, observer: openTelemetry({ tracerProvider: failing, meterProvider }) });
    await broken.migrate();
    await broken.enqueueMany([{ job: "ok", payload: {} }, { job: "ok", payload: {} }]);
    expect(await broken.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 2 });
    const m = await exported(broken.tables.prefix);
    expect(m.get("pgtick.runs")!.points.map((p) => p.value)).toEqual([2]);

    const plain = createJobs({ db: h.main, jobs: [odd, unreadable], settings: { tablePrefix: "m3_" }, logger: silentLogger, observer: openTelemetry({ tracerProvider: seeing, meterProvider }) });
    await plain.migrate();
    await plain.enqueueMany([{ job: "odd", payload: {} }, { job: "unreadable", payload: {} }]);
    expect(await plain.tick({ budgetMs: 10_000 })).toMatchObject({ deadLettered: 2 });
    expect(statuses).toContain("an object");
    // An error whose name cannot be read still ends its span (it was left open, and lost).
    expect(statuses).toContain("[an error that could not be read]");
  });
});

describe("a broken meter", () => {
  /** A meter whose counter's add throws, or whose createCounter does; its other instruments record nothing. */
  const meterThat = (breaks: "add" | "create"): Meter => {
    const instrument = { add: () => { if (breaks === "add") throw new Error("meter add broke"); }, record: () => {} };
    const observable = { addCallback() {}, removeCallback() {} };
    return {
      createCounter: () => { if (breaks === "create") throw new Error("meter create broke"); return instrument; },
      createHistogram: () => instrument, createGauge: () => instrument, createUpDownCounter: () => instrument,
      createObservableGauge: () => observable, createObservableCounter: () => observable, createObservableUpDownCounter: () => observable,
      addBatchObservableCallback() {}, removeBatchObservableCallback() {},
    } as unknown as Meter;
  };

  it.each(["add", "create"] as const)("costs the metrics only (its %s throws): the tick's and the run's spans end, and the failure is logged", async (breaks) => {
    const ended = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(ended)] });
    const ok = defineJob({ name: "ok", schema: z.object({}), handler: () => {} });
    const logger = memoryLogger();
    const jobs = createJobs({ db: h.main, jobs: [ok], settings: { tablePrefix: `m_${breaks}_` }, logger, observer: openTelemetry({ tracerProvider: provider, meter: meterThat(breaks) }) });
    await jobs.migrate();
    await jobs.enqueue("ok", {});
    expect(await jobs.tick({ budgetMs: 10_000 })).toMatchObject({ succeeded: 1 });
    // Before: a throwing add left the run's span open (lost), a throwing createCounter made no span at all.
    expect(ended.getFinishedSpans().map((s) => s.name).sort()).toEqual(["pgtick.run ok", "pgtick.tick"]);
    expect(ended.getFinishedSpans().find((s) => s.name === "pgtick.run ok")!.attributes).toMatchObject({ "pgtick.run.outcome": "succeeded" });
    expect(logger.entries.some((e) => e.level === "warn" && JSON.stringify(e).includes(`meter ${breaks} broke`))).toBe(true);
  });
});

describe("without @opentelemetry/api", () => {
  const bundle = async (entry: string) => {
    const { build } = await import("esbuild");
    const out = await build({
      stdin: { contents: `export * from "${entry}";`, resolveDir: process.cwd(), loader: "ts" },
      bundle: true, write: false, metafile: true, format: "esm", platform: "node", logLevel: "silent", external: ["pg-native"],
      // The entry points' sources, as everywhere in this repository (an app's bundler gets dist/).
      conditions: ["pgtick-source"],
    });
    return { inputs: Object.keys(out.metafile.inputs), code: out.outputFiles[0]!.text };
  };

  it("bundles the library and its platform entry points without it: only pgtick/otel imports it", async () => {
    for (const entry of ["pgtick", "pgtick/cloudflare", "pgtick/vercel/tick"]) {
      const { inputs, code } = await bundle(entry);
      expect(inputs.filter((f) => f.includes("@opentelemetry")), entry).toEqual([]);
      expect(code, entry).not.toContain("@opentelemetry");
    }
    const otel = await bundle("pgtick/otel");
    expect(otel.inputs.some((f) => f.includes("node_modules/@opentelemetry/api/"))).toBe(true);
  });
});
