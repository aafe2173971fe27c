// `pgtick/otel`: OpenTelemetry for the queue, through `@opentelemetry/api` (an optional peer
// dependency: only this entry point imports it). `createJobs({ observer: openTelemetry() })`.
export { openTelemetry, type OpenTelemetryOptions } from "./observer.js";
export { formatTraceparent, parseTraceparent } from "./traceparent.js";
export {
  ATTR, METRIC_QUEUE_DUE, METRIC_QUEUE_OLDEST_WAIT, METRIC_QUEUE_RUNNING, METRIC_RUN_DURATION, METRIC_RUNS, SCOPE, SPAN_RUN, SPAN_TICK,
} from "./names.js";
export type { Observer, WiredObserver, RunEnd, RunInfo, RunObservation, RunOutcome as ObservedRunOutcome, TickInfo, TickObservation } from "../observe/observer.js";
