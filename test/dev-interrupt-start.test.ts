// A Ctrl-C while `npm run dev` makes its database for the first time: the terminal sends SIGINT to its whole
// foreground process group. The dev server stops cleanly once started (exit 0); before, the initdb it ran in
// that group died of the same signal, and it exited 1 saying initdb had failed.
import { execSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";
import { removeDataDir } from "../src/dev/pg-data.js";
import { postgresUser } from "../src/dev/pg-user.js";
import { FROM_SOURCE, isolatedEnv } from "./support/isolated-env.js";
import { freePort } from "./support/postgres.js";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "pgtick-dev-int-"));
afterAll(() => {
  removeDataDir(join(dir, "pg"), postgresUser());
  rmSync(dir, { recursive: true, force: true });
});

it("stops cleanly on a Ctrl-C that reaches the whole process group while the database is first made", async () => {
  const child = spawn(process.execPath, [...FROM_SOURCE, "scripts/dev.ts"], {
    cwd: root,
    env: isolatedEnv({ DEV_DIR: dir, PORT: String(await freePort()), NO_COLOR: "1" }),
    stdio: ["ignore", "pipe", "pipe"],
    // A process group of its own, as a terminal's foreground job has.
    detached: true,
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exit = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  // The dev server's initdb, while it runs (other tests may run one of their own): its process group.
  const initdbGroup = () =>
    execSync("ps -eo ppid=,pgid=,comm=").toString().split("\n").map((l) => l.trim().split(/\s+/)).find(([ppid, , comm]) => ppid === String(child.pid) && comm === "initdb")?.[1];
  const started = Date.now();
  let group: string | undefined;
  while (!(group = initdbGroup()) && child.exitCode === null && !output.includes("Ctrl-C stops it") && Date.now() - started < 60_000) await new Promise((r) => setTimeout(r, 5));
  expect(child.exitCode).toBeNull();
  // initdb takes a second or more: seen every time.
  expect(group).toBeDefined();
  // Out of reach of the terminal's signal to the dev server's group (it was in that group, and died of it).
  expect(group).not.toBe(String(child.pid));
  process.kill(-child.pid!, "SIGINT");
  expect(await exit, output).toBe(0);
  expect(output).toContain("stopped");
  expect(output).not.toContain("initdb exited");
}, 90_000);
