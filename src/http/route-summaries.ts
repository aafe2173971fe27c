import type { RouteName } from "./route-table.js";

/** What each route does, in a line: the OpenAPI document's `summary`, kept apart from the route table so that the routing (a Worker's, the client's) carries none of it. */
export const ROUTE_SUMMARIES: Record<RouteName, string> = {
  enqueue: "Enqueue a job, or a batch of up to 1,000 in one statement",
  list: "Queued and running jobs, newest first",
  get: "A job: queued, running, dead, or succeeded (with its output), and its attempts",
  cancel: "Cancel a queued job",
  run: "Make a queued job due now (delayed, backing off or debounced); one already due keeps its place",
  "deadLetters.list": "Dead letters, most recent first",
  "deadLetters.replayMany": "Replay many dead letters in one statement: by ids, or the oldest matching a filter (a job, a reason, both; {} is every job's)",
  "deadLetters.discardMany": "Discard many dead letters in one statement",
  "deadLetters.get": "A dead letter",
  "deadLetters.replay": "Queue a dead letter again (its id kept, attempt 0), optionally with an edited payload checked by the job's schema",
  "deadLetters.discard": "Discard a dead letter",
  "runs.list": "The run history: every attempt that ended, newest first",
  "runs.get": "A run, with its output, error, stack and log lines",
  "runs.rerun": "Enqueue a new job with the run's job, payload and correlation id",
  "schedules.list": "Schedules with their next runs, by name",
  "schedules.pause": "Pause a schedule",
  "schedules.resume": "Resume a schedule",
  "schedules.run": "Enqueue the schedule's job now",
  stats: "Queue depth per job and status, oldest waiting age, dead letters per job, per-minute counts of the last hour, the ticks",
  health: "Liveness and database reachability; no auth",
  tick: "Run one tick (the platform cron's target, and the kick's)",
  "tick.get": "Run one tick (Vercel Cron sends GET)",
  openapi: "This API as OpenAPI 3.1, with each job's payload schema",
};
