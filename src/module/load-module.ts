import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CliError, EXIT } from "../exit-codes.js";
import { isJobsError } from "../errors.js";
import { asJobsModule, type JobsModule } from "./jobs-module.js";

/** The jobs module when none is named: `functions/jobs.ts` in the folder the dev server or the CLI runs in. */
export const DEFAULT_JOBS_MODULE = "functions/jobs.ts";

/** Imports a jobs module from a path (TypeScript works: the CLI and the dev server run under tsx) and checks its shape. */
export const loadJobsModule = async (path: string, cwd: string): Promise<JobsModule & { path: string }> => {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(file)) throw new CliError(EXIT.config, `jobs module ${path} does not exist`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new CliError(EXIT.config, `cannot load jobs module ${path}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`);
  }
  try {
    return { ...asJobsModule(loaded, `jobs module ${path}`), path: file };
  } catch (e) {
    if (isJobsError(e)) throw new CliError(EXIT.config, e.message);
    throw e;
  }
};
