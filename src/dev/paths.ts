import { readDev } from "../settings/dev-catalog.js";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import type { Env } from "../settings/library.js";

/** Where `npm run dev` keeps its state: DEV_DIR, default `.dev` (git-ignored). */
export const devPaths = (env: Env, cwd: string) => {
  const given = readDev(env, "DEV_DIR");
  const dir = given ? (isAbsolute(given) ? given : resolve(cwd, given)) : join(cwd, ".dev");
  return {
    dir,
    /** The embedded PostgreSQL's data directory. */
    pg: join(dir, "pg"),
    /** Tokens generated on first run. */
    secrets: join(dir, "secrets.json"),
    /** Written while the dev server runs, so the CLI can find its database. */
    server: join(dir, "server.json"),
    /** Written before the jobs module's seed runs on fresh tables, removed once it has: a seed that failed runs at the next start. */
    seedPending: join(dir, "seed-pending"),
  };
};

export interface DevServerInfo {
  readonly pid: number;
  readonly url: string;
  readonly databaseUrl: string;
  readonly jobsModule: string;
  /** Its tick endpoint's secret, unless its kicks are off: the CLI starts a tick there after it queued a job due now. */
  readonly cronSecret?: string;
}

/** Whether a process with this pid exists (EPERM: it exists but belongs to someone else). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === "EPERM";
  }
};

/** The dev server running from this folder, if any (a file left by a killed one is ignored). */
export const runningDevServer = (env: Env, cwd: string): DevServerInfo | undefined => {
  const file = devPaths(env, cwd).server;
  if (!existsSync(file)) return undefined;
  try {
    const info = JSON.parse(readFileSync(file, "utf8")) as DevServerInfo;
    // A dev server is a node process that started before it wrote the file; a pid reused since by
    // another program, node included, is a file left by a killed one.
    const writer = typeof info.pid === "number" && alive(info.pid) && /node|tsx/.test(commandOf(info.pid) ?? "") && !(startedAt(info.pid)! > statSync(file).mtimeMs + 1_000);
    return writer && typeof info.databaseUrl === "string" ? info : undefined;
  } catch {
    return undefined;
  }
};

/**
 * The command line of a process (Linux's /proc, else `ps`), or undefined when it cannot be read. A pid
 * in a file left by a killed process may since name another program: it is checked before use.
 */
export const commandOf = (pid: number): string | undefined => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    try {
      return execFileSync("ps", ["-p", String(pid), "-o", "command="], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    } catch {
      return undefined;
    }
  }
};

/** When a process started (ms since the epoch), from Linux's /proc; undefined elsewhere. */
export const startedAt = (pid: number): number | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
    const boot = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1]);
    // Clock ticks of 1/100 s, as on every Linux this runs on.
    return Number.isFinite(ticks) && Number.isFinite(boot) ? boot * 1000 + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
};
