import type { JobsSettings } from "../settings/library.js";
import { isJobsError, JobsError } from "../errors.js";
import type { AnyJob } from "../job.js";
import { checkPayload } from "../payload.js";
import { type FlowKeys, flowKeysFor } from "../flow/keys.js";
import { defineSchedule, type Schedule, type ScheduleDefinition } from "./define.js";

/** A schedule checked against the jobs in code, with what each of its occurrences is enqueued with. */
export interface Prepared {
  readonly schedule: Schedule;
  /** The payload as stored: what the handler will parse. */
  readonly stored: unknown;
  readonly priority: number;
  readonly maxAttempts: number;
  /** The keys of the job's limits: every occurrence obeys them as an enqueue would. */
  readonly keys: FlowKeys;
}

/** Validates every schedule against the jobs at createJobs time; throws `invalid_schedule` naming it. */
export const prepare = (
  input: readonly (Schedule | ScheduleDefinition)[],
  registry: ReadonlyMap<string, AnyJob>,
  settings: JobsSettings,
): Prepared[] => {
  const seen = new Set<string>();
  return input.map((item) => {
    // Plain objects are accepted too: checked here; defined ones (frozen) come back as they are.
    const schedule = defineSchedule(item);
    if (seen.has(schedule.name)) {
      throw new JobsError("invalid_schedule", `schedule "${schedule.name}" is defined twice`, { schedule: schedule.name });
    }
    seen.add(schedule.name);
    try {
      const { job, stored, parsed } = checkPayload(registry, schedule.job, schedule.payload, settings.maxPayloadBytes);
      return { schedule, stored, priority: job.priority ?? 0, maxAttempts: job.maxAttempts ?? settings.defaultMaxAttempts, keys: flowKeysFor(job, parsed) };
    } catch (e) {
      if (!isJobsError(e)) throw e;
      const extra = e.details && typeof e.details === "object" ? (e.details as Record<string, unknown>) : {};
      throw new JobsError("invalid_schedule", `schedule "${schedule.name}": ${e.message}`, { ...extra, schedule: schedule.name, cause: e.code });
    }
  });
};
