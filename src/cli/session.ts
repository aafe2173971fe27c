import { existsSync } from "node:fs";
import { resolve } from "node:path";
import pg from "pg";
import { type JobsModule, jobsFromModule } from "../module/jobs-module.js";
import { DEFAULT_JOBS_MODULE, loadJobsModule } from "../module/load-module.js";
import { read } from "../settings/catalog.js";
import { readDev } from "../settings/dev-catalog.js";
import { type Env, settingsFromEnv } from "../settings/library.js";
import { cancelOnServer, cancelsSent } from "../db-cancel.js";
import { runningDevServer } from "../dev/paths.js";
import { tickRequest } from "../http/tick-request.js";
import type { AnyJobs } from "../jobs.js";
import { jsonLogger, type Logger } from "../log.js";
import { errorText } from "../error-text.js";
import { isJobsError } from "../errors.js";
import { CliError, EXIT, oneLine } from "../exit-codes.js";
import { inert } from "../terminal.js";

/**
 * How long a connection attempt may take before the database counts as unreachable: the URL's
 * `connect_timeout` (seconds, as libpq reads it; 0 waits without a limit, as there), else 10 s.
 */
export const connectTimeoutMs = (url: string): number => {
  let seconds: number | undefined;
  try {
    const given = new URL(url).searchParams.get("connect_timeout");
    seconds = given !== null && /^\d+$/.test(given) ? Number(given) : undefined;
  } catch {
    // A URL pg reads another way: the default.
  }
  return (seconds ?? 10) * 1_000;
};
/** How long closing the pool may wait for connections still out. */
const CLOSE_WAIT_MS = 2_000;
/** The most the CLI waits for the jobs module's observer to send what it recorded before it exits. */
const FLUSH_WAIT_MS = 5_000;

/** Waits for `work`, at most `ms`. */
const within = async (work: Promise<unknown>, ms: number): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise<void>((done) => (timer = setTimeout(done, ms)))]).finally(() => clearTimeout(timer));
};

/** Where a command reads and writes: injected so tests can run the CLI in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Env;
  readonly cwd: string;
  /** Aborted on Ctrl-C: a running tick stops and requeues what it holds. */
  readonly signal?: AbortSignal;
  /** Piped input, for `enqueue <job> -`. */
  readonly stdin?: () => Promise<string>;
}

export interface Globals {
  readonly json: boolean;
  readonly verbose: boolean;
  readonly jobs?: string;
}

export type { AnyJobs } from "../jobs.js";

/** The jobs a command needs: `required` for handlers and schemas (tick, enqueue, schedules), `optional` otherwise. */
export type JobsNeed = "required" | "optional" | "none";

/**
 * Opens what a command works on: a pg pool on DATABASE_URL (or the running dev
 * server's database), and a `createJobs` instance over the operator's jobs module.
 */
export class Session {
  private pool: pg.Pool | undefined;
  private observer: JobsModule["observer"];
  constructor(
    readonly io: CliIo,
    readonly globals: Globals,
  ) {}

  /** Log lines go to stderr, so stdout stays the command's output. */
  get logger(): Logger {
    return jsonLogger(this.globals.verbose ? "debug" : "warn", (line) => this.io.stderr(`${inert(line)}\n`));
  }

  /**
   * After a job due now was queued on the running dev server's database: a tick there at once, as the API's
   * enqueue kicks one (the job waited for the dev server's cron, up to a minute). Best effort: a dev server
   * that does not answer within a second leaves it to its cron.
   */
  async kickDevServer(): Promise<void> {
    const dev = read(this.io.env, "DATABASE_URL") ? undefined : runningDevServer(this.io.env, this.io.cwd);
    if (!dev?.cronSecret) return;
    const request = tickRequest(`${dev.url}/api/tick`, dev.cronSecret, { kick: true, async: true });
    await fetch(request, { signal: AbortSignal.timeout(1_000) }).then((r) => r.body?.cancel(), () => {});
  }

  databaseUrl(): string {
    const url = read(this.io.env, "DATABASE_URL") ?? runningDevServer(this.io.env, this.io.cwd)?.databaseUrl;
    if (!url) {
      throw new CliError(EXIT.config, "DATABASE_URL is not set: set it to the PostgreSQL connection string (or, in a clone of the pgtick repository, start `npm run dev` in this folder; one started with DEV_DIR is found with the same DEV_DIR)");
    }
    return url;
  }

  /** Whether `path` is only the folder's functions/jobs.ts, found there, not named by --jobs, JOBS_MODULE or the dev server. */
  private foundOnly(path: string): boolean {
    return !(this.globals.jobs || readDev(this.io.env, "JOBS_MODULE") || runningDevServer(this.io.env, this.io.cwd)?.jobsModule) && path === DEFAULT_JOBS_MODULE;
  }

  private modulePath(): string | undefined {
    const fallback = existsSync(resolve(this.io.cwd, DEFAULT_JOBS_MODULE)) ? DEFAULT_JOBS_MODULE : undefined;
    return this.globals.jobs || readDev(this.io.env, "JOBS_MODULE") || runningDevServer(this.io.env, this.io.cwd)?.jobsModule || fallback;
  }

  async module(need: JobsNeed, purpose: string): Promise<JobsModule | undefined> {
    // The module (named outright, the dev server's, or functions/jobs.ts when present) is loaded for
    // every command: its settings (a table prefix) decide which tables even `migrate` and `stats` use,
    // so that every command of one folder works on the same queue.
    const path = this.modulePath();
    if (need === "none" && path !== undefined && this.foundOnly(path)) {
      // Found, not named: one that does not load (a secret it reads at import is unset) leaves a command
      // that needs no definitions working on the default tables, said once, as before it was looked for.
      return loadJobsModule(path, this.io.cwd).catch((e: unknown) => {
        this.io.stderr(`pgtick: warning: ${e instanceof Error ? e.message : String(e)}; going on without it (its settings, a table prefix, do not apply): pass --jobs to use it\n`);
        return undefined;
      });
    }
    if (need === "none") return path ? loadJobsModule(path, this.io.cwd) : undefined;
    if (!path) {
      if (need === "required") throw new CliError(EXIT.config, `${purpose} needs your job definitions: pass --jobs <module> or set JOBS_MODULE`);
      return undefined;
    }
    return loadJobsModule(path, this.io.cwd);
  }

  async jobs(need: JobsNeed, purpose: string): Promise<AnyJobs> {
    const mod = await this.module(need, purpose);
    this.observer = mod?.observer;
    const settings = settingsFromEnv(this.io.env, mod?.settings);
    if (!this.pool) {
      const url = this.databaseUrl();
      this.pool = new pg.Pool({
        connectionString: url,
        max: Math.max(2, Math.min(settings.concurrency, 10)) + 1,
        // A server that takes the connection and never answers (a frozen database, a stuck pooler)
        // is unreachable, said within this long, not waited on for ever.
        connectionTimeoutMillis: connectTimeoutMs(url),
      });
      // An idle client dropped by the server is not the command's failure; the next query reconnects.
      this.pool.on("error", () => {});
      this.cancelOnInterrupt(this.pool);
    }
    try {
      return jobsFromModule(mod ?? { jobs: [] }, { db: this.pool, settings, logger: this.logger });
    } catch (e) {
      // Definitions createJobs refuses (a schedule whose payload the job's schema no longer takes)
      // are a broken module, whatever the command.
      if (isJobsError(e) && (e.code === "invalid_schedule" || e.code === "invalid_config")) {
        throw new CliError(EXIT.config, `the jobs module's definitions are refused: ${oneLine(e)}`);
      }
      throw e;
    }
  }

  /** Set by a command that ends itself on Ctrl-C (a tick requeues what it holds): its statements are not cancelled. */
  ownsInterrupt = false;

  /**
   * Ctrl-C cancels the statements a command is running (an enqueue waiting on a lock, a replay): the
   * process exits at once or after its grace, and a statement left running would still write when its
   * lock freed, after the operator was told the command was interrupted.
   */
  private cancelOnInterrupt(pool: pg.Pool): void {
    const running = new Set<pg.PoolClient>();
    pool.on("acquire", (client) => running.add(client));
    pool.on("release", (_error, client) => running.delete(client));
    pool.on("remove", (client) => running.delete(client as pg.PoolClient));
    this.io.signal?.addEventListener("abort", () => {
      if (!this.ownsInterrupt) for (const client of running) cancelOnServer(client);
    }, { once: true });
  }

  /**
   * Ends the pool, waiting at most CLOSE_WAIT_MS: a connection whose statement was given up on (the
   * database did not answer) may never be released, and the command's answer is already out.
   */
  async close(): Promise<void> {
    await this.flushObserver();
    const pool = this.pool;
    this.pool = undefined;
    if (pool) await within(pool.end(), CLOSE_WAIT_MS);
    // A statement given up on at its bound (or at Ctrl-C) is cancelled on the server before the process exits.
    await cancelsSent(CLOSE_WAIT_MS);
  }

  /**
   * The process exits as soon as the command is done: spans and metrics an exporter still holds
   * (a batch processor, a periodic reader, any network exporter) would be lost without this.
   */
  private async flushObserver(): Promise<void> {
    const observer = this.observer;
    this.observer = undefined;
    if (!observer?.flush) return;
    try {
      await within(observer.flush(), FLUSH_WAIT_MS);
    } catch (error) {
      this.logger.log("warn", "the observer could not send what it recorded", { error: errorText(error) });
    }
  }

  out(text: string): void {
    const shown = inert(text);
    this.io.stdout(shown.endsWith("\n") ? shown : `${shown}\n`);
  }

  /** `--json` prints the value; otherwise `human` says it for people. */
  print(value: unknown, human: () => string): void {
    this.out(this.globals.json ? JSON.stringify(value, null, 2) : human());
  }
}
