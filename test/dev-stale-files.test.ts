// Files a killed dev server leaves behind name pids that, after a reboot, other programs may hold:
// neither is signalled nor taken for the dev server.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, expect, it } from "vitest";
import { devPaths, runningDevServer } from "../src/dev/paths.js";
import { removeDataDir } from "../src/dev/pg-data.js";
import { postgresUser } from "../src/dev/pg-user.js";
import { startDevPostgres } from "../src/dev/postgres.js";

const root = mkdtempSync(join(tmpdir(), "pgtick-devstale-"));
const dir = join(root, "pg");
const others: ChildProcess[] = [];
afterAll(() => {
  for (const p of others) p.kill("SIGKILL");
  removeDataDir(dir, postgresUser());
  rmSync(root, { recursive: true, force: true });
});

/** Another program, running: its pid is what a stale file names. */
const another = async (command: string, args: string[]): Promise<ChildProcess> => {
  const child = spawn(command, args, { stdio: "ignore" });
  others.push(child);
  await new Promise((resolve) => child.once("spawn", resolve));
  return child;
};

it("starts over a stale postmaster.pid that names another program, and leaves that program alone (it got a SIGINT)", async () => {
  const first = await startDevPostgres({ dir });
  await first.stop();
  const victim = await another(process.execPath, ["-e", "process.on('SIGINT', () => process.exit(3)); setInterval(() => {}, 1000)"]);
  writeFileSync(join(dir, "postmaster.pid"), `${victim.pid}\n${dir}\n1700000000\n5432\n/tmp\n127.0.0.1\n  5432001         0\nready   \n`);
  const second = await startDevPostgres({ dir });
  try {
    const client = new pg.Client({ connectionString: second.url });
    await client.connect();
    expect((await client.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await client.end();
    await new Promise((r) => setTimeout(r, 200));
    expect([victim.exitCode, victim.signalCode]).toEqual([null, null]);
  } finally {
    await second.stop();
  }
});

it("takes no stale server.json whose pid another program holds for a running dev server", async () => {
  const devDir = join(root, "dev");
  mkdirSync(devDir, { recursive: true });
  const sleeper = await another("sleep", ["60"]);
  const env = { DEV_DIR: devDir };
  writeFileSync(devPaths(env, root).server, JSON.stringify({ pid: sleeper.pid, url: "http://localhost:1", databaseUrl: "postgres://x@127.0.0.1:1/x", jobsModule: "jobs.ts" }));
  expect(runningDevServer(env, root)).toBeUndefined();
  // A node process that started after the file was written did not write it (a pid reused since).
  const later = await another(process.execPath, ["-e", "setInterval(() => {}, 1000)"]);
  const stale = JSON.stringify({ pid: later.pid, url: "http://localhost:1", databaseUrl: "postgres://x@127.0.0.1:1/x", jobsModule: "jobs.ts" });
  writeFileSync(devPaths(env, root).server, stale);
  utimesSync(devPaths(env, root).server, new Date(Date.now() - 3_600_000), new Date(Date.now() - 3_600_000));
  if (process.platform === "linux") expect(runningDevServer(env, root)).toBeUndefined();
  // The dev server's own pid (a node process) is taken.
  writeFileSync(devPaths(env, root).server, JSON.stringify({ pid: process.pid, url: "http://localhost:1", databaseUrl: "postgres://x@127.0.0.1:1/x", jobsModule: "jobs.ts" }));
  expect(runningDevServer(env, root)).toMatchObject({ pid: process.pid });
});
