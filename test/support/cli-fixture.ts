// The operator CLI suites' shared setup: the CLI run in-process (`runCli`, the same code the
// executable runs) against a table prefix of its own per test, migrated through the CLI itself.
import { resolve } from "node:path";
import { expect } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { harness } from "./harness.js";
import { emptyFolder } from "./isolated-env.js";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export const root = resolve(import.meta.dirname, "../..");
export const jobsModule = resolve(root, "functions/jobs.ts");

export const json = <T = Record<string, unknown>>(r: Run): T => JSON.parse(r.stdout) as T;

/** One line on stderr, no stack trace. */
export const expectOneLineError = (r: Run, code: number, text: string | RegExp) => {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe("");
  const lines = r.stderr.trimEnd().split("\n");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^pgtick: /);
  expect(lines[0]).toMatch(text);
  expect(r.stderr).not.toMatch(/\n\s+at /);
};

/** The CLI against a database named after the test file. */
export const cliFixture = async (name: string) => {
  const h = await harness(name);
  // The CLI under test looks for a running dev server in a folder of its own, which
  // holds none: a `npm run dev` in this repository must not stand in for an unset
  // DATABASE_URL or JOBS_MODULE.
  const devDir = emptyFolder("pgtick-cli-dev-");
  let prefixes = 0;
  /** A table prefix of its own per test, migrated through the CLI itself. */
  const fresh = async (cwd = root) => {
    const env = { DATABASE_URL: h.url, JOBS_MODULE: jobsModule, JOBS_TABLE_PREFIX: `cli${++prefixes}_`, DEV_DIR: devDir };
    const cli = async (args: string[], extra: Record<string, string> = {}, stdin?: string): Promise<Run> => {
      let stdout = "";
      let stderr = "";
      const code = await runCli(args, {
        stdout: (t) => void (stdout += t),
        stderr: (t) => void (stderr += t),
        env: { ...env, ...extra },
        cwd,
        stdin: stdin === undefined ? undefined : async () => stdin,
      });
      return { code, stdout, stderr };
    };
    const migrated = await cli(["migrate"]);
    expect(migrated.code).toBe(0);
    const p = env.JOBS_TABLE_PREFIX;
    const rows = <R = Record<string, unknown>>(sql: string, params: unknown[] = []) => h.rows<R>(sql.replaceAll("{p}", p), params);
    return { cli, env, rows, prefix: p };
  };
  // A folder without functions/jobs.ts, the jobs module the CLI takes when none is named.
  const noModule = emptyFolder("pgtick-cli-nomodule-");
  /** The CLI run from a folder with no jobs module and none named. */
  const withoutModule = async (args: string[]) => (await fresh(noModule)).cli(args, { JOBS_MODULE: "" });
  return { h, fresh, withoutModule };
};
