/** The instrumentation scope of every span and metric. */
export const SCOPE = "pgtick";

export const SPAN_TICK = "pgtick.tick";
/** Followed by the job's name: `pgtick.run send-welcome`. */
export const SPAN_RUN = "pgtick.run";

export const METRIC_RUNS = "pgtick.runs";
export const METRIC_RUN_DURATION = "pgtick.run.duration";
export const METRIC_QUEUE_DUE = "pgtick.queue.due";
export const METRIC_QUEUE_RUNNING = "pgtick.queue.running";
export const METRIC_QUEUE_OLDEST_WAIT = "pgtick.queue.oldest_wait";

export const ATTR = {
  queue: "pgtick.queue",
  jobName: "pgtick.job.name",
  jobId: "pgtick.job.id",
  attempt: "pgtick.run.attempt",
  maxAttempts: "pgtick.run.max_attempts",
  correlationId: "pgtick.job.correlation_id",
  outcome: "pgtick.run.outcome",
  durationMs: "pgtick.run.duration_ms",
  deadReason: "pgtick.dead_letter.reason",
} as const;
