import type { Attributes, Meter, MetricOptions } from "@opentelemetry/api";
import type { RunEnd } from "../observe/observer.js";
import type { TickReport } from "../tick/types.js";
import { ATTR, METRIC_QUEUE_DUE, METRIC_QUEUE_OLDEST_WAIT, METRIC_QUEUE_RUNNING, METRIC_RUN_DURATION, METRIC_RUNS } from "./names.js";

interface Recorder {
  record(value: number, attributes: Attributes): void;
}

/**
 * A gauge of the last value recorded: the API's synchronous gauge where it has
 * one (1.9 and later), else an observable gauge that reports the last values.
 */
const lastValueGauge = (meter: Meter, name: string, options: MetricOptions): Recorder => {
  if (typeof meter.createGauge === "function") return meter.createGauge(name, options);
  const last = new Map<string, { value: number; attributes: Attributes }>();
  meter.createObservableGauge(name, options).addCallback((result) => {
    for (const { value, attributes } of last.values()) result.observe(value, attributes);
  });
  return { record: (value, attributes) => void last.set(JSON.stringify(attributes), { value, attributes }) };
};

export interface Instruments {
  run(queue: string, jobName: string, end: RunEnd): void;
  /** An attempt whose tick died, counted by the tick that found it: no duration is known. */
  reclaimed(queue: string, jobName: string, deadLettered: boolean): void;
  queue(queue: string, minute: NonNullable<TickReport["queue"]>): void;
}

/** Up to five minutes: a handler may run as long as its platform lets a tick run. */
const DURATION_BOUNDS_MS = [5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000];

const create = (meter: Meter): Instruments => {
  const runs = meter.createCounter(METRIC_RUNS, { unit: "{run}", description: "Runs of jobs that ended, by job and outcome" });
  const duration = meter.createHistogram(METRIC_RUN_DURATION, {
    unit: "ms", description: "How long runs took, by job and outcome", advice: { explicitBucketBoundaries: DURATION_BOUNDS_MS },
  });
  const due = lastValueGauge(meter, METRIC_QUEUE_DUE, { unit: "{job}", description: "Jobs due and waiting, at the first tick of the minute (counted up to 10,000)" });
  const running = lastValueGauge(meter, METRIC_QUEUE_RUNNING, { unit: "{job}", description: "Jobs running, at the first tick of the minute (counted up to 10,000)" });
  const oldestWait = lastValueGauge(meter, METRIC_QUEUE_OLDEST_WAIT, { unit: "ms", description: "How long the oldest due job has waited, at the first tick of the minute" });
  return {
    run(queue, jobName, end) {
      // An attempt its tick lost is counted by whoever ended it (lease_expired, by the tick that reclaimed it): counted
      // here too, one attempt was two in pgtick.runs. Its span still says lease_lost.
      if (end.outcome === "lease_lost") return;
      const attributes = { [ATTR.queue]: queue, [ATTR.jobName]: jobName, [ATTR.outcome]: end.outcome };
      runs.add(1, attributes);
      duration.record(end.durationMs, attributes);
    },
    reclaimed(queue, jobName, deadLettered) {
      runs.add(1, { [ATTR.queue]: queue, [ATTR.jobName]: jobName, [ATTR.outcome]: deadLettered ? "dead_lettered" : "lease_expired" });
    },
    queue(queue, minute) {
      const attributes = { [ATTR.queue]: queue };
      due.record(minute.due, attributes);
      running.record(minute.running, attributes);
      oldestWait.record(minute.oldestWaitMs ?? 0, attributes);
    },
  };
};

// One set per meter: the meter is looked up at each tick (a global one may be registered after the observer is made).
const made = new WeakMap<Meter, Instruments>();

export const instrumentsFor = (meter: Meter): Instruments => {
  let instruments = made.get(meter);
  if (!instruments) made.set(meter, (instruments = create(meter)));
  return instruments;
};
