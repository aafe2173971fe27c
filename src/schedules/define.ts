import { JobsError } from "../errors.js";
import type { AnyJob, JobInput } from "../job.js";
import { CronRule, type DayMatch } from "./cron.js";
import { describeRule } from "./describe.js";
import { canonicalZone, isKnownZone } from "./zone.js";

/**
 * What to do with occurrences whose time passed while no tick ran (a platform outage):
 * - `"skip"` (default): run an occurrence only if a tick sees it on time (within the
 *   grace period, 5 minutes by default) and no later one is also due; skip the rest.
 * - `"latest"`: run the most recent missed occurrence once, however late.
 * - `{ catchUp: n }`: run each missed occurrence, oldest first, at most the `n` most recent.
 */
export type MissedPolicy = "skip" | "latest" | { readonly catchUp: number };

export interface ScheduleDefinition {
  /** Unique; 1-128 characters: letters, digits and . _ : - / */
  readonly name: string;
  /** 5 fields (minute first) or 6 (seconds first), or an alias such as `@daily` (see cron-fields.ts for the syntax). */
  readonly cron: string;
  /** IANA zone the expression is read in. Default "UTC". */
  readonly timezone?: string | undefined;
  /** Name of the job each occurrence enqueues. */
  readonly job: string;
  /** Checked against the job's schema when `createJobs` is called. */
  readonly payload: unknown;
  readonly missed?: MissedPolicy | undefined;
  /**
   * When both day fields are restricted (neither is `*`): `"or"` (default) runs on days that
   * match either field, `"and"` only on days that match both. `0 0 *∕2 * 1` runs on odd days
   * and on Mondays under "or", on odd-dated Mondays under "and" (what Vixie cron does with it).
   */
  readonly dayMatch?: DayMatch | undefined;
}

/**
 * A definition whose job and payload TypeScript checks: `defineSchedule<typeof report>({ job: "daily-report", payload })`,
 * or with a union of jobs (`(typeof jobList)[number]`), the payload of the job named.
 */
export type TypedScheduleDefinition<J extends AnyJob> = {
  [N in J["name"]]: Omit<ScheduleDefinition, "job" | "payload"> & { readonly job: N; readonly payload: JobInput<J, N> };
}[J["name"]];

/** A definition after validation: defaults filled in, the rule parsed. */
export interface Schedule {
  readonly name: string;
  readonly cron: string;
  readonly timezone: string;
  readonly job: string;
  readonly payload: unknown;
  readonly missed: MissedPolicy;
  /** As given: undefined means the default, "or". */
  readonly dayMatch?: DayMatch;
  readonly rule: CronRule;
  readonly description: string;
}

/**
 * Schedules this module made: frozen, so already valid. Building a queue checks each schedule it is given
 * again (plain objects are accepted too), and edge runtimes build one per request: parsing and checking
 * 100 cron rules there cost about 13 ms of CPU a request.
 */
const defined = new WeakSet<Schedule>();

const NAME = /^[A-Za-z0-9][A-Za-z0-9._:\-/]{0,127}$/;
const MAX_CATCH_UP = 1_000;
const KEYS = ["name", "cron", "timezone", "job", "payload", "missed", "dayMatch"];

const invalid = (name: unknown, message: string, details: Record<string, unknown> = {}): never => {
  throw new JobsError("invalid_schedule", `schedule ${JSON.stringify(name)}: ${message}`, { schedule: name, ...details });
};

const checkMissed = (name: string, missed: unknown): MissedPolicy => {
  if (missed === undefined) return "skip";
  if (missed === "skip" || missed === "latest") return missed;
  if (typeof missed === "object" && missed !== null && Object.keys(missed).join() === "catchUp") {
    const n = (missed as { catchUp: unknown }).catchUp;
    if (typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= MAX_CATCH_UP) return { catchUp: n };
  }
  return invalid(name, `missed must be "skip", "latest" or { catchUp: n } with n from 1 to ${MAX_CATCH_UP}`, { field: "missed" });
};

const checkDayMatch = (name: string, dayMatch: unknown): DayMatch | undefined => {
  if (dayMatch === undefined || dayMatch === "or" || dayMatch === "and") return dayMatch;
  return invalid(name, `dayMatch must be "or" or "and"`, { field: "dayMatch" });
};

/**
 * Declares a recurring job. The expression and the zone are checked here, so a
 * typo fails at deploy time, not at 3 a.m.; the payload is checked against the
 * job's schema when the schedule is handed to `createJobs`. Throws `JobsError`
 * with code `invalid_schedule` naming the schedule.
 */
export function defineSchedule(definition: ScheduleDefinition): Schedule;
export function defineSchedule<J extends AnyJob>(definition: TypedScheduleDefinition<J>): Schedule;
export function defineSchedule(definition: ScheduleDefinition): Schedule {
  if (defined.has(definition as Schedule)) return definition as Schedule;
  // A schedule another copy of this module made (an app whose CommonJS jobs module loads pgtick apart from
  // the CLI's copy): checked again from what it was defined with, without the fields that copy derived.
  if (Object.isFrozen(definition) && definition !== null && typeof definition === "object" && "rule" in definition && "description" in definition) {
    const { rule: _rule, description: _description, ...given } = definition as ScheduleDefinition & Partial<Schedule>;
    return defineSchedule(given);
  }
  const { name } = definition ?? {};
  if (typeof name !== "string" || !NAME.test(name)) {
    invalid(name, "name must be 1-128 characters: letters, digits and . _ : - /, starting with a letter or digit", { field: "name" });
  }
  // A misspelt option would be a default silently (timeZone: the schedule in UTC).
  for (const key of Object.keys(definition)) {
    if (KEYS.includes(key)) continue;
    const meant = KEYS.find((k) => k.toLowerCase() === key.toLowerCase());
    invalid(name, `unknown option ${JSON.stringify(key)}${meant ? ` (did you mean ${meant}?)` : ""}; a schedule takes ${KEYS.join(", ")}`, { field: key });
  }
  if (typeof definition.job !== "string" || definition.job === "") invalid(name, "job must be the name of a defined job", { field: "job" });
  const zoneInput = definition.timezone === undefined ? "UTC" : definition.timezone;
  if (typeof zoneInput !== "string" || !isKnownZone(zoneInput)) {
    invalid(name, `unknown time zone ${JSON.stringify(zoneInput)}; use an IANA name such as "Europe/London"`, { field: "timezone" });
  }
  const timezone = canonicalZone(zoneInput);
  if (typeof definition.cron !== "string" || definition.cron.trim() === "") invalid(name, "cron must be a cron expression", { field: "cron" });
  const cron = definition.cron.trim();
  const dayMatch = checkDayMatch(name, definition.dayMatch);
  let rule: CronRule;
  try {
    rule = new CronRule(cron, timezone, name, dayMatch);
    // An expression that can never match (30 February) fails here rather than at tick time.
    rule.nextAfter(Date.now());
  } catch (e) {
    return invalid(name, `invalid cron expression ${JSON.stringify(cron)}: ${(e as Error).message}`, { field: "cron" });
  }
  const missed = checkMissed(name, definition.missed);
  // The words describe "or" days; under "and" the expression is shown with what it means.
  const description = dayMatch === "and" && rule.bothDaysRestricted ? `cron "${cron}" on days matching both day fields (${timezone})` : describeRule(rule);
  const schedule: Schedule = Object.freeze({ name, cron, timezone, job: definition.job, payload: definition.payload, missed: Object.freeze(missed), dayMatch, rule, description });
  defined.add(schedule);
  return schedule;
}
