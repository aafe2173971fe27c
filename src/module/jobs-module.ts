import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { JobsSettingsInput } from "../settings/library.js";
import type { AnyJob } from "../job.js";
import { CliError, EXIT } from "../cli/exit-codes.js";

/**
 * What the CLI and the dev server load from the operator's code: the job
 * definitions (handlers and schemas), and optionally the schedules, settings
 * and, for `npm run dev` on a fresh database, a seed.
 */
export interface JobsModule {
  readonly jobs: readonly AnyJob[];
  /** `defineSchedule(...)` results. */
  readonly schedules?: readonly unknown[];
  readonly settings?: JobsSettingsInput;
  /** Called by the dev server once, when it has just created the tables. */
  readonly seed?: (jobs: unknown) => Promise<void>;
}

const isJob = (v: unknown): v is AnyJob =>
  typeof v === "object" && v !== null && typeof (v as AnyJob).name === "string" && typeof (v as AnyJob).handler === "function";

/** Imports a jobs module (TypeScript works: the CLI runs under tsx) and checks its shape. */
export const loadJobsModule = async (path: string, cwd: string): Promise<JobsModule & { path: string }> => {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(file)) throw new CliError(EXIT.config, `jobs module ${path} does not exist`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new CliError(EXIT.config, `cannot load jobs module ${path}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
  }
  // Named exports, or one default export object with the same fields.
  const mod = (loaded.jobs === undefined && typeof loaded.default === "object" && loaded.default !== null ? loaded.default : loaded) as Record<string, unknown>;
  if (!Array.isArray(mod.jobs) || !mod.jobs.every(isJob)) {
    throw new CliError(EXIT.config, `jobs module ${path} must export \`jobs\`: an array of defineJob(...) definitions`);
  }
  if (mod.schedules !== undefined && !Array.isArray(mod.schedules)) {
    throw new CliError(EXIT.config, `jobs module ${path}: \`schedules\` must be an array of defineSchedule(...) results`);
  }
  if (mod.seed !== undefined && typeof mod.seed !== "function") {
    throw new CliError(EXIT.config, `jobs module ${path}: \`seed\` must be a function`);
  }
  return {
    path: file,
    jobs: mod.jobs,
    schedules: mod.schedules as unknown[] | undefined,
    settings: (mod.settings ?? undefined) as JobsSettingsInput | undefined,
    seed: mod.seed as JobsModule["seed"],
  };
};
