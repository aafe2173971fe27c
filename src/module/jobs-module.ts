import type { Db, PgLike } from "../db.js";
import { JobsError } from "../errors.js";
import type { AnyJob } from "../job.js";
import { type AnyJobs, createJobs } from "../jobs.js";
import type { Logger } from "../log.js";
import type { WiredObserver } from "../observe/observer.js";
import type { ScheduleDefinition } from "../schedules/index.js";
import type { JobsSettings, JobsSettingsInput } from "../settings/library.js";

/**
 * The one module a user writes (`functions/jobs.ts` in this repository): the job
 * definitions, and optionally the schedules, settings, a seed for `npm run dev`
 * and the deployment's own tables. `npm run dev`, the CLI, `npm run migrate:deploy`
 * and both platforms' entrypoints all build their queue from it.
 */
export interface JobsModule {
  readonly jobs: readonly AnyJob[];
  /** `defineSchedule(...)` results; when given (even `[]`), ticks keep the schedules table in step with them. */
  readonly schedules?: readonly ScheduleDefinition[];
  /** Settings in code, under those read from the environment. */
  readonly settings?: JobsSettingsInput;
  /** Called by `npm run dev` once, when it has just created the tables: jobs to watch. */
  readonly seed?: (jobs: AnyJobs) => Promise<void>;
  /** Your own tables: `npm run migrate:deploy` runs this after the library's migrations. */
  readonly setup?: (db: Db) => Promise<void>;
  /** Sees ticks, runs and enqueues: `openTelemetry()` from `pgtick/otel`. */
  readonly observer?: WiredObserver;
}

const isJob = (v: unknown): v is AnyJob =>
  typeof v === "object" && v !== null && typeof (v as AnyJob).name === "string" && typeof (v as AnyJob).handler === "function";

/**
 * Checks what an import gave (named exports, or a default export with the same
 * fields) and returns it as a jobs module; `invalid_config` saying what is wrong.
 */
export const asJobsModule = (loaded: Record<string, unknown>, where = "the jobs module"): JobsModule => {
  const mod = (loaded.jobs === undefined && typeof loaded.default === "object" && loaded.default !== null ? loaded.default : loaded) as Record<string, unknown>;
  const bad = (message: string) => new JobsError("invalid_config", `${where} ${message}`);
  if (!Array.isArray(mod.jobs) || !mod.jobs.every(isJob)) throw bad("must export `jobs`: an array of defineJob(...) definitions");
  if (mod.schedules !== undefined && !Array.isArray(mod.schedules)) throw bad("exports `schedules`, which must be an array of defineSchedule(...) results");
  for (const key of ["seed", "setup"] as const) if (mod[key] !== undefined && typeof mod[key] !== "function") throw bad(`exports \`${key}\`, which must be a function`);
  if (mod.settings !== undefined && (typeof mod.settings !== "object" || mod.settings === null)) throw bad("exports `settings`, which must be an object");
  if (mod.observer !== undefined && (typeof mod.observer !== "object" || mod.observer === null || !(Symbol.for("pgtick.observer") in mod.observer))) {
    throw bad("exports `observer`, which must come from openTelemetry() (pgtick/otel) or defineObserver(hooks) (pgtick)");
  }
  return mod as unknown as JobsModule;
};

/** The queue a jobs module describes, on one connection: the one place a module becomes a `createJobs`. */
export const jobsFromModule = (mod: JobsModule, env: { readonly db: Db | PgLike; readonly settings: JobsSettings; readonly logger?: Logger }): AnyJobs =>
  createJobs({
    db: env.db,
    jobs: mod.jobs,
    settings: env.settings,
    logger: env.logger,
    // Only when the module defines them: a tick given schedules syncs the table to that list.
    ...(mod.schedules ? { schedules: mod.schedules } : {}),
    ...(mod.observer ? { observer: mod.observer } : {}),
  });
