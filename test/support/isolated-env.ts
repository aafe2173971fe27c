// What a test hands to the CLI or a child process, instead of the developer's
// shell: without the variables pgtick, the dev server and node-postgres read, so
// an exported JOBS_MODULE, DEV_DIR or PGSSLMODE cannot change what a test sees,
// and a `.dev/server.json` of a dev server running in some folder is only found
// where a test says so.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

const READ_BY_PGTICK = /^(DATABASE_URL|PORT|HOST|TICK_INTERVAL|LOG_LEVEL|LOG_FORMAT|NO_COLOR|CRON_SECRET|VERCEL_URL|(JOBS|DEV|DASHBOARD|NEON)_\w+|PG\w+)$/;

/** process.env without pgtick's variables, plus `set`. */
export const isolatedEnv = (set: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !READ_BY_PGTICK.test(name))),
  ...set,
});

/**
 * Node's arguments for a child that runs this repository's TypeScript as its npm scripts do: through tsx,
 * with `pgtick/...` imports (functions/, examples/) resolved to the sources (package.json's "pgtick-source"
 * condition; without it they are the package's dist/, as in an app).
 */
export const FROM_SOURCE = ["--conditions=pgtick-source", "--import", "tsx"] as const;

const made: string[] = [];
// Registered while the test file is collected, so folders made inside a test are removed too.
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A new empty folder, removed after the file's tests. */
export const emptyFolder = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
};

/**
 * A folder in which `npm run dev` seems to be running: its `.dev/server.json`
 * names a live process (this one) and a database that does not exist.
 */
export const folderWithLiveDevServer = (jobsModule: string): { dir: string; databaseUrl: string } => {
  const dir = emptyFolder("pgtick-live-dev-");
  const databaseUrl = "postgres://postgres:postgres@127.0.0.1:1/no_such_database";
  mkdirSync(join(dir, ".dev"));
  writeFileSync(join(dir, ".dev", "server.json"), JSON.stringify({ pid: process.pid, url: "http://127.0.0.1:1", databaseUrl, jobsModule }));
  return { dir, databaseUrl };
};
