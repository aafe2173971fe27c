import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CliError, EXIT } from "../exit-codes.js";
import { isJobsError } from "../errors.js";
import { asJobsModule, type JobsModule } from "./jobs-module.js";

/** The jobs module when none is named: `functions/jobs.ts` in the folder the dev server or the CLI runs in. */
export const DEFAULT_JOBS_MODULE = "functions/jobs.ts";

/**
 * What went wrong loading a module, on one line: the message's first line, and for a syntax error
 * (esbuild's "Transform failed with 1 error:") the lines naming file, line and column too.
 */
const loadError = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const [first = "", ...rest] = e.message.split("\n").map((l) => l.trim()).filter(Boolean);
  const where = rest.filter((l) => /:\d+:\d+: ERROR:/.test(l)).slice(0, 3);
  return [first.replace(/:$/, ""), ...where].join(": ");
};

/** Imports a jobs module from a path (TypeScript works: the CLI and the dev server run under tsx) and checks its shape. */
export const loadJobsModule = async (path: string, cwd: string): Promise<JobsModule & { path: string }> => {
  const file = isAbsolute(path) ? path : resolve(cwd, path);
  if (!existsSync(file)) throw new CliError(EXIT.config, `jobs module ${path} does not exist`);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new CliError(EXIT.config, `cannot load jobs module ${path}: ${loadError(e)}`);
  }
  try {
    return { ...asJobsModule(loaded, `jobs module ${path}`), path: file };
  } catch (e) {
    if (isJobsError(e)) throw new CliError(EXIT.config, e.message);
    throw e;
  }
};
