import {
  type Attributes, context, type Context, type Meter, type MeterProvider, metrics, type Span, SpanKind, SpanStatusCode, trace,
  type Tracer, type TracerProvider,
} from "@opentelemetry/api";
import type { Observer, RunEnd, RunInfo, RunObservation, TickInfo, TickObservation, WiredObserver } from "../observe/observer.js";
import { defineObserver } from "../observe/safe.js";
import type { TickReport } from "../tick/types.js";
import { type Instruments, instrumentsFor } from "./metrics.js";
import { ATTR, SCOPE, SPAN_RUN, SPAN_TICK } from "./names.js";
import { formatTraceparent, parseTraceparent } from "./traceparent.js";

export interface OpenTelemetryOptions {
  /** Default: the tracer `pgtick` of `tracerProvider`. */
  readonly tracer?: Tracer;
  /** Default: the global one (`trace.getTracerProvider()`), looked up at each tick. */
  readonly tracerProvider?: TracerProvider;
  /** Default: the meter `pgtick` of `meterProvider`. */
  readonly meter?: Meter;
  /** Default: the global one (`metrics.getMeterProvider()`), looked up at each tick. */
  readonly meterProvider?: MeterProvider;
}

/**
 * Marks a span failed: the exception recorded (an Error, or the text of one, as the run's history
 * stores it), the status ERROR with its message.
 */
const fail = (span: Span, error: unknown, fallback: string) => {
  const text = clip(thrownText(error), MAX_TEXT);
  span.setStatus({ code: SpanStatusCode.ERROR, message: text.length > 0 ? text : fallback });
  try {
    if (isError(error)) {
      // Its parts clipped as the run's history clips them: a message of 2 MB made a span an exporter refuses whole.
      const { name, message, stack } = error;
      span.recordException({
        name: typeof name === "string" ? clip(name, MAX_TEXT) : "Error",
        message: typeof message === "string" ? clip(message, MAX_TEXT) : "",
        ...(typeof stack === "string" ? { stack: clip(stack, MAX_STACK) } : {}),
      });
    } else if (text.length > 0) span.recordException(text);
  } catch {
    // Reading the error's name, message or stack may throw: the exception event is its text then.
    span.recordException(text);
  }
};

/** What the run's history keeps of an error's text and of its stack (this entry pulls in nothing of the core). */
const MAX_TEXT = 4_000;
const MAX_STACK = 16_000;
/** At most `max` characters, on a whole character (a surrogate pair is not cut in two). */
const clip = (text: string, max: number): string => {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
};

const isError = (error: unknown): error is Error => {
  try {
    return error instanceof Error;
  } catch {
    // A Proxy whose prototype cannot be read.
    return false;
  }
};

/**
 * The text of a thrown value, never throwing: `Name: message` for an Error, a string, an object's
 * message, else its JSON (this entry pulls in nothing of the core, so not its errorText).
 */
const thrownText = (error: unknown): string => {
  if (error === undefined) return "";
  if (typeof error === "string") return error;
  try {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (isError(error)) return `${typeof name === "string" ? name : "Error"}: ${typeof message === "string" ? message : ""}`;
    if (typeof message === "string") return message;
    return JSON.stringify(error) ?? String(error);
  } catch {
    return "[an error that could not be read]";
  }
};

const flushable = (provider: unknown): provider is { forceFlush(): Promise<unknown> } =>
  typeof (provider as { forceFlush?: unknown } | undefined)?.forceFlush === "function";

/** The SDK's provider behind the API's global proxy (the proxy itself cannot flush). */
const delegateOf = (provider: TracerProvider): unknown => {
  const proxy = provider as { getDelegate?: () => unknown };
  return typeof proxy.getDelegate === "function" ? proxy.getDelegate() : provider;
};

const reportAttributes = (r: TickReport): Attributes => ({
  "pgtick.tick.claimed": r.claimed,
  "pgtick.tick.succeeded": r.succeeded,
  "pgtick.tick.retried": r.retried,
  "pgtick.tick.dead_lettered": r.deadLettered,
  "pgtick.tick.requeued": r.requeued,
  "pgtick.tick.lease_lost": r.leaseLost,
  "pgtick.tick.reclaimed": r.reclaimed,
  "pgtick.tick.unstarted": r.unstarted,
  "pgtick.tick.statements": r.statements,
  "pgtick.tick.spawned": r.spawned,
  "pgtick.tick.capped": r.capped,
  ...(r.slot !== null ? { "pgtick.tick.slot": r.slot } : {}),
  ...(r.queue ? { "pgtick.queue.due": r.queue.due, "pgtick.queue.running": r.queue.running, "pgtick.queue.oldest_wait_ms": r.queue.oldestWaitMs ?? 0 } : {}),
});

const runObservation = (tracer: Tracer, instruments: Instruments, parent: Context, queue: string, run: RunInfo): RunObservation => {
  const enqueuedBy = parseTraceparent(run.traceparent);
  const span = tracer.startSpan(`${SPAN_RUN} ${run.jobName}`, {
    kind: SpanKind.CONSUMER,
    attributes: {
      [ATTR.queue]: queue, [ATTR.jobName]: run.jobName, [ATTR.jobId]: run.jobId, [ATTR.attempt]: run.attempt, [ATTR.maxAttempts]: run.maxAttempts,
      ...(run.correlationId !== null ? { [ATTR.correlationId]: run.correlationId } : {}),
    },
    // A link, not a parent: the run belongs to the tick's trace and points back to the request that enqueued it.
    links: enqueuedBy ? [{ context: enqueuedBy }] : [],
  }, parent);
  const own = trace.setSpan(parent, span);
  return {
    within: (fn) => context.with(own, fn),
    end(result: RunEnd) {
      // The metrics first: a span processor that throws (a broken exporter) must not lose them too; nor a
      // meter that throws the span (said after the span has ended).
      const metric = attempt(() => instruments.run(queue, run.jobName, result));
      try {
        span.setAttributes({ [ATTR.outcome]: result.outcome, [ATTR.durationMs]: result.durationMs, ...(result.reason ? { [ATTR.deadReason]: result.reason } : {}) });
        if (result.outcome === "lease_lost") fail(span, result.error, "lease lost: another tick took the job over, or the settlement was not written");
        else if (result.outcome === "retried") fail(span, result.error, "the attempt failed; it will be retried");
        else if (result.outcome === "dead_lettered") fail(span, result.error, `dead-lettered (${result.reason ?? "failed"})`);
      } finally {
        span.end();
      }
      metric.rethrow();
    },
  };
};

/** What `fn` threw, held to be thrown once the spans it must not lose have ended. */
const attempt = (fn: () => void): { rethrow(): void } => {
  try {
    fn();
    return { rethrow() {} };
  } catch (error) {
    return {
      rethrow() {
        throw error;
      },
    };
  }
};

/** Instruments that record nothing: the meter could not make them (its failure is said when the tick ends). */
const NO_INSTRUMENTS: Instruments = { run() {}, reclaimed() {}, queue() {} };

const tickObservation = (tracer: Tracer, instruments: Instruments, info: TickInfo, broken = attempt(() => {})): TickObservation => {
  const parent = context.active();
  const span = tracer.startSpan(SPAN_TICK, {
    kind: SpanKind.INTERNAL,
    attributes: { [ATTR.queue]: info.queue, "pgtick.tick.budget_ms": info.budgetMs, "pgtick.tick.handoff": info.handoff },
  }, parent);
  const own = trace.setSpan(parent, span);
  return {
    within: (fn) => context.with(own, fn),
    run: (run) => runObservation(tracer, instruments, own, info.queue, run),
    reclaimed(runs) {
      for (const r of runs) instruments.reclaimed(info.queue, r.jobName, r.deadLettered);
    },
    end(report, error) {
      const metric = attempt(() => report?.queue && instruments.queue(info.queue, report.queue));
      try {
        if (report) span.setAttributes(reportAttributes(report));
        if (error !== undefined) fail(span, error, "the tick failed");
      } finally {
        span.end();
      }
      metric.rethrow();
      broken.rethrow();
    },
  };
};

/**
 * An observer (`createJobs({ observer })`) that makes OpenTelemetry spans and
 * metrics of the queue through `@opentelemetry/api`: a span per tick (a child
 * of whatever span is active, e.g. the platform's request span), a child span
 * per run linked to the request that enqueued the job, and run and queue
 * metrics. Without a registered SDK every call is a no-op.
 */
const OPTION_KEYS = ["tracer", "tracerProvider", "meter", "meterProvider"] as const;
const METHOD: Record<(typeof OPTION_KEYS)[number], string> = { tracer: "startSpan", tracerProvider: "getTracer", meter: "createCounter", meterProvider: "getMeter" };

/** A misspelt or wrong option sent the telemetry to the global providers, or lost it after one warning: refused here. */
const checkOptions = (options: unknown): OpenTelemetryOptions => {
  const bad = (message: string) => Object.assign(new TypeError(`openTelemetry(): ${message}`), { code: "invalid_options" });
  if (options === undefined) return {};
  if (typeof options !== "object" || options === null || Array.isArray(options)) throw bad(`options must be an object of { ${OPTION_KEYS.join(", ")} }`);
  for (const [key, value] of Object.entries(options)) {
    if (!(OPTION_KEYS as readonly string[]).includes(key)) {
      const near = OPTION_KEYS.find((k) => k.toLowerCase() === key.toLowerCase());
      throw bad(`unknown option ${JSON.stringify(key)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}: it takes ${OPTION_KEYS.join(", ")}`);
    }
    const method = METHOD[key as (typeof OPTION_KEYS)[number]];
    if (value !== undefined && typeof (value as Record<string, unknown> | null)?.[method] !== "function") {
      throw bad(`${key} must be an OpenTelemetry ${key[0]!.toUpperCase()}${key.slice(1)} (one with ${method}())`);
    }
  }
  return options as OpenTelemetryOptions;
};

export const openTelemetry = (given: OpenTelemetryOptions = {}): WiredObserver => {
  const options = checkOptions(given);
  return defineObserver(observerOf(options));
};

const observerOf = (options: OpenTelemetryOptions): Observer => ({
  traceparent: () => formatTraceparent(trace.getSpanContext(context.active())),
  tick(info) {
    const tracer = options.tracer ?? (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    // A meter that cannot make its instruments costs the metrics, not the spans.
    let instruments = NO_INSTRUMENTS;
    const made = attempt(() => (instruments = instrumentsFor(options.meter ?? (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE))));
    return tickObservation(tracer, instruments, info, made);
  },
  async flush() {
    const providers = [delegateOf(options.tracerProvider ?? trace.getTracerProvider()), options.meterProvider ?? metrics.getMeterProvider()];
    await Promise.all(providers.filter(flushable).map((p) => p.forceFlush()));
  },
});
