// `npm run dev`: PostgreSQL, migrations, the API and the dashboard on one port,
// and a local cron that ticks, all in one process that Ctrl-C stops cleanly.
import { setMaxListeners } from "node:events";
import { existsSync, mkdirSync, rmSync, unwatchFile, watchFile, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { createAdaptorServer } from "@hono/node-server";
import pg from "pg";
import { oneLine } from "../exit-codes.js";
import { DEFAULT_JOBS_MODULE, loadJobsModule } from "../module/load-module.js";
import { checkEnv, read, unknownVariables } from "../settings/catalog.js";
import { EVERY_VAR, readDev } from "../settings/dev-catalog.js";
import { type Env, settingsFromEnv } from "../settings/library.js";
import { commaList } from "../settings/parse.js";
import { JobsError } from "../errors.js";
import { createApp } from "../http/api-app.js";
import { zodPayloadSchemas } from "../http/payload-schemas.js";
import { openApiDocument } from "../http/openapi.js";
import { jsonLogger, type Logger, type LogLevel } from "../log.js";
import { kickBudgetMs, kickEnabled } from "../platform/budget.js";
import { CONNECT_TIMEOUT_MS } from "../platform/connection.js";
import { jobsFromModule } from "../module/jobs-module.js";
import { devLogger } from "./log.js";
import { devPaths, type DevServerInfo, runningDevServer } from "./paths.js";
import { type DevPostgres, startDevPostgres } from "./postgres.js";
import { loadSecrets } from "./secrets.js";
import { resolveAuth } from "../dashboard/dashboard-settings.js";
import { createLocalPlatform } from "./local-platform.js";

/** A database URL fit to print: the password, if any, masked, in its user part or its query (libpq's `password=`). */
export const withoutPassword = (url: string): string => {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    for (const key of [...u.searchParams.keys()]) if (key.toLowerCase() === "password") u.searchParams.set(key, "***");
    return u.toString();
  } catch {
    return "(unparsable DATABASE_URL)";
  }
};

const DEFAULT_PORT = 8787;
const DEFAULT_TICK_INTERVAL_MS = 60_000;
export { DEFAULT_JOBS_MODULE } from "../module/load-module.js";

export interface DevIo {
  readonly env: Env;
  readonly cwd: string;
  readonly out: (line: string) => void;
  /**
   * Given, as soon as the server may start PostgreSQL, what stops it at once: PostgreSQL (what runs is cut
   * short, its jobs claimed until their leases end) and the server's file. For a second Ctrl-C, while the
   * server starts or stops.
   */
  readonly onHalt?: (halt: () => Promise<void>) => void;
}

export interface DevServer {
  readonly url: string;
  readonly databaseUrl: string;
  /**
   * Aborts the running ticks (they requeue what they hold), closes the server, the pool and PostgreSQL.
   * False when a tick failed while stopping: its jobs may stay claimed until their leases end.
   */
  stop(): Promise<boolean>;
}

const config = (name: string, message: string) => new JobsError("invalid_config", `${name} ${message}`, { setting: name });

const listen = (server: Server, port: number, host: string, name = "PORT"): Promise<number> =>
  new Promise((done, fail) => {
    server.once("error", (e: NodeJS.ErrnoException) =>
      fail(
        e.code === "EADDRINUSE"
          ? config(name, `${port} is in use: stop what listens there or set ${name} to another port`)
          : // A HOST that names no address of this machine (not found, or not its own): said as the setting's fault, not the database's.
            e.code === "ENOTFOUND" || e.code === "EAI_AGAIN" || e.code === "EADDRNOTAVAIL"
            ? config("HOST", `${host} is not an address of this machine (${e.code}): set HOST to one, such as 127.0.0.1 or 0.0.0.0`)
            : e,
      ),
    );
    server.listen(port, host, () => {
      const address = server.address();
      done(typeof address === "object" && address ? address.port : port);
    });
  });

/** Whether `port` can be listened on, asked before anything is started or written (a taken port changes nothing). */
const checkPort = async (port: number, host: string, name = "PORT"): Promise<void> => {
  const probe = createServer();
  await listen(probe, port, host, name);
  await new Promise<void>((done) => probe.close(() => done()));
};

/** An enqueue to try, as the curl's -d argument: the example job's, or a job of the module's own with its payload to fill in. */
const tryBody = (jobs: ReadonlyArray<{ readonly name: string }>): string => {
  const example = jobs.length === 0 || jobs.some((j) => j.name === "send-welcome");
  const body = example ? { job: "send-welcome", payload: { email: "ada@example.com", name: "Ada" } } : { job: jobs[0]!.name, payload: {} };
  return `'${JSON.stringify(body).replace(/'/g, "'\\''")}'${example ? "" : "   # with its payload"}`;
};

/** How this machine reaches an address the server listens on (an IPv6 literal in brackets; any address via localhost). */
export const urlHost = (host: string): string =>
  host === "127.0.0.1" || host === "::" || host === "localhost" ? "localhost" : host === "0.0.0.0" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;

const closeServer = (server: Server): Promise<void> =>
  new Promise((done) => {
    server.close(() => done());
    // Keep-alive connections from a browser would hold close() open.
    server.closeAllConnections();
  });

/** Starts everything; resolves when the app listens and the first tick has been started. */
export const startDevServer = async (io: DevIo): Promise<DevServer> => {
  const { env, out } = io;
  checkEnv(env, EVERY_VAR);
  const paths = devPaths(env, io.cwd);
  const port = readDev(env, "PORT") ?? DEFAULT_PORT;
  const intervalMs = readDev(env, "TICK_INTERVAL") ?? DEFAULT_TICK_INTERVAL_MS;
  const level: LogLevel = readDev(env, "LOG_LEVEL") ?? "info";
  const color = Boolean(process.stdout.isTTY) && readDev(env, "NO_COLOR") === undefined;
  const logger: Logger = readDev(env, "LOG_FORMAT") === "json" ? jsonLogger(level, out) : devLogger(level, out, color);
  // A misspelt setting is ignored like any unknown variable: say so, or it would silently not apply.
  for (const name of unknownVariables(env, EVERY_VAR)) logger.log("warn", "unknown setting ignored (see the README's settings tables)", { variable: name });
  const modulePath = readDev(env, "JOBS_MODULE") ?? DEFAULT_JOBS_MODULE;
  const givenDatabase = read(env, "DATABASE_URL");
  const host = readDev(env, "HOST") ?? "127.0.0.1";
  // Another dev server from this folder owns its database: starting would stop that server's PostgreSQL.
  const other = runningDevServer(env, io.cwd);
  if (other) throw config("DEV_DIR", `${paths.dir} is in use by the dev server at ${other.url} (pid ${other.pid}): stop it, or set DEV_DIR to another folder`);
  await checkPort(port, host);
  // The embedded PostgreSQL's port, where one is asked for: PostgreSQL itself would only say it shut down.
  const pgPort = readDev(env, "DEV_PG_PORT");
  if (!givenDatabase && pgPort !== undefined) await checkPort(pgPort, "127.0.0.1", "DEV_PG_PORT");
  const mod = await loadJobsModule(modulePath, io.cwd);
  // The library's settings, checked whole before PostgreSQL starts (checkEnv parses each variable alone: a
  // JOBS_CONCURRENCY of 10001 passed it, and the server started PostgreSQL before failing on it).
  settingsFromEnv(env, mod.settings);
  mkdirSync(paths.dir, { recursive: true });

  // Everything started so far, stopped in reverse on failure or shutdown.
  const cleanups: Array<() => Promise<void>> = [];
  let clean = true;
  const cleanup = async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn().catch((e: unknown) => out(`dev: while stopping: ${oneLine(e)}`));
  };
  let database: DevPostgres | undefined;
  io.onHalt?.(async () => {
    rmSync(paths.server, { force: true });
    await database?.stop();
  });
  try {
    if (!givenDatabase) {
      database = await startDevPostgres({ dir: paths.pg, port: pgPort, log: join(paths.dir, "postgres.log") });
      cleanups.push(() => database!.stop());
    }
    const databaseUrl = givenDatabase ?? database!.url;
    // A connect that the server never answers fails, as the platforms' pools do, rather than waiting on.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 20, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    // pool.end() resolves before its connections have closed: PostgreSQL, stopped next, may still end them (57P01), which is no failure.
    let ending = false;
    pool.on("error", (e) => ending || logger.log("warn", "idle database connection failed", { error: e.message }));
    cleanups.push(() => ((ending = true), pool.end()));

    const settings = settingsFromEnv(env, mod.settings);
    const jobs = jobsFromModule(mod, { db: pool, settings, logger });
    const applied = await jobs.migrate();
    if (applied.length > 0) logger.log("info", "migrations applied", { versions: applied.join(",") });
    await mod.setup?.(jobs.db);
    // Fresh tables (or a seed that failed at an earlier start): give a new user one job of each kind to watch.
    if ((applied.includes(1) || existsSync(paths.seedPending)) && mod.seed && readDev(env, "DEV_SEED") !== false) {
      writeFileSync(paths.seedPending, "");
      try {
        await mod.seed(jobs);
      } catch (e) {
        throw new JobsError("invalid_config", `the jobs module's seed(jobs) failed (it runs again at the next start): ${oneLine(e)}`);
      }
      rmSync(paths.seedPending, { force: true });
      logger.log("info", "example jobs enqueued", { module: modulePath });
    }

    const { secrets, created } = loadSecrets(paths.secrets, env);
    const appEnv: Env = { ...env, ...secrets };

    // Ctrl-C aborts every running tick: each requeues what it holds before the pool and PostgreSQL stop.
    const shutdown = new AbortController();
    // Every tick listens to it, up to JOBS_MAX_TICKS at once: more than Node's warning threshold of 10 is no leak.
    setMaxListeners(0, shutdown.signal);
    let url = "";
    const local = createLocalPlatform({
      tickUrl: () => `${url}/api/tick`,
      cronSecret: secrets.CRON_SECRET.trim(),
      intervalMs,
      onError: (e) => logger.log("error", "starting a tick failed", { error: oneLine(e) }),
    });
    cleanups.push(async () => {
      shutdown.abort();
      const failed = await local.stop();
      if (failed > 0) {
        clean = false;
        out(`dev: ${failed} tick${failed === 1 ? "" : "s"} failed while stopping: the jobs ${failed === 1 ? "it was" : "they were"} running may stay claimed until their leases end, then run again`);
      }
    });
    const kickBudget = kickBudgetMs(env, settings.tickBudgetMs);

    const api = createApp({
      jobs,
      env: appEnv,
      logger,
      payloadSchemas: zodPayloadSchemas,
      openApi: openApiDocument,
      // Every tick is an invocation of /api/tick, answered 202 while it runs, as on a platform.
      tick: (req) => jobs.tick({ claimForMs: req.kick ? kickBudget : undefined, handoff: req.handoff, signal: shutdown.signal, spawn: (h) => local.spawn(h) }),
      background: (work) => local.track(work),
      // The kick: a running tick with room claims it; otherwise a new tick starts.
      onEnqueued: ({ dueNow }) => {
        if (dueNow && kickEnabled(env) && !jobs.wake()) local.kick();
      },
    });
    // The same app as on a platform: the API under /api, the dashboard under /dashboard.
    const server = createAdaptorServer({ fetch: api.fetch }) as Server;
    const boundPort = await listen(server, port, host);
    cleanups.push(() => closeServer(server));
    // The local cron and the printed links reach the address it listens on (HOST=::1 is not localhost's 127.0.0.1).
    url = `http://${urlHost(host)}:${boundPort}`;

    // Stopped in reverse: the ticks first (they requeue through the pool), then the server, the pool, PostgreSQL.
    local.start();
    // A module once imported stays as it was: an edit is said, with what to do (the CLI, which loads it anew, and
    // this server's ticks would otherwise sync two lists of schedules, each removing what the other added).
    watchFile(mod.path, { interval: 1_000 }, (now, before) => {
      if (now.mtimeMs !== before.mtimeMs) logger.log("warn", "the jobs module changed: restart npm run dev to load it (this server runs the jobs and schedules it started with)", { module: mod.path });
    });
    cleanups.push(async () => unwatchFile(mod.path));

    // The CLI kicks with the secret, as the API's enqueue does: not at all with JOBS_KICK=off.
    const info: DevServerInfo = { pid: process.pid, url, databaseUrl, jobsModule: mod.path, ...(kickEnabled(env) ? { cronSecret: secrets.CRON_SECRET.trim() } : {}) };
    // Holds the database URL (a DATABASE_URL's password included): readable by this user only, like the secrets.
    writeFileSync(paths.server, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
    cleanups.unshift(async () => rmSync(paths.server, { force: true }));

    // A password the dashboard refuses (too short) leaves it closed: say so, rather than print it as the way in.
    const auth = resolveAuth(appEnv);
    // What the app takes, as it reads them: trimmed, and one token of a list (the untrimmed list printed as one
    // Bearer token made the suggested curl a 401; a password with spaces around it was printed with them).
    const apiToken = commaList("JOBS_API_TOKEN", secrets.JOBS_API_TOKEN)[0] ?? "";
    const cronSecret = secrets.CRON_SECRET.trim();
    const dashboard = auth.configured ? `password: ${secrets.DASHBOARD_PASSWORD.trim()}` : `closed: ${auth.problem}`;
    const every = intervalMs % 60_000 === 0 ? `${intervalMs / 60_000} min` : `${intervalMs / 1_000} s`;
    out(
      [
        "",
        `pgtick dev server${created ? " (tokens generated)" : ""}`,
        `  dashboard   ${url}/dashboard   ${dashboard}`,
        `  API         ${url}/api         Authorization: Bearer ${apiToken}`,
        `  tick        ${url}/api/tick    Authorization: Bearer ${cronSecret}   (also every ${every}; TICK_INTERVAL to change; up to ${settings.maxTicks} at once)`,
        `  database    ${withoutPassword(databaseUrl)}${database ? `   (data in ${paths.pg})` : ""}`,
        `  jobs        ${mod.path}`,
        `  tokens in   ${paths.secrets}`,
        "",
        `  try: curl -s -X POST ${url}/api/jobs -H "Authorization: Bearer ${apiToken}" \\`,
        `         -H "Content-Type: application/json" -d ${tryBody(mod.jobs)}`,
        `       npx pgtick stats`,
        "",
        "Ctrl-C stops it; the data stays for the next start.",
        "",
      ].join("\n"),
    );

    let stopping: Promise<boolean> | undefined;
    return {
      url,
      databaseUrl,
      stop: () => (stopping ??= cleanup().then(() => clean)),
    };
  } catch (e) {
    await cleanup();
    throw e;
  }
};
