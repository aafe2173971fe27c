import { cancelOnServer } from "./db-cancel.js";
import { preparedSender } from "./db-prepare.js";

/**
 * The narrow database interface the library needs: run one statement with
 * positional parameters. Every state transition is a single statement, so no
 * adapter needs interactive transactions; that is what lets the same code run
 * over node-postgres, Neon's WebSocket Pool and Neon's HTTP `neon()`.
 */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly rowCount: number;
}

export interface QueryOptions {
  /**
   * Marks a hot statement (the tick's steps) for the server to plan once per
   * connection. Drivers that cannot prepare (Neon's HTTP driver) ignore it.
   */
  readonly prepare?: boolean;
  /**
   * Gives up on the statement after this long: the promise rejects with
   * `StatementTimeout`, and the connection it ran on is destroyed (a pool
   * replaces it), so a frozen network cannot hold the caller past its budget.
   * Over Neon's HTTP driver the request is aborted.
   */
  readonly timeoutMs?: number;
}

/** A statement given up on after `timeoutMs`. Whether the server ran it is unknown: writes must be fenced. */
export class StatementTimeout extends Error {
  override readonly name = "StatementTimeout";
  constructor(readonly timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms`);
  }
}

// Node's network errors; PostgreSQL's connection exceptions (08), insufficient resources (53: too many
// connections), operator intervention (57P01-57P03: shutdown, terminated, starting up; 57014: cancelled).
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const UNAVAILABLE_STATES = /^(08|53|57P0[1-3]$|57014$)/;
const CONNECTION_LOST = /connection terminated|connection timeout|timeout exceeded when trying to connect|not queryable|not currently accepting connections|connection lost/i;

/** An error's code (a SQLSTATE, or Node's ECONNREFUSED and the like), if it has one as text. */
export const errorCode = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === "string") return code;
  // Node reports a refused connection to every address of a host as an AggregateError.
  const errors = (e as { errors?: unknown } | null)?.errors;
  return Array.isArray(errors) ? errorCode(errors[0]) : undefined;
};

/** PostgreSQL's SQLSTATE of a failed statement, when the error came from the server. */
export const sqlState = (e: unknown): string | undefined => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
};

/**
 * Whether an error says the database is out of reach for now (down, restarting, out of connections,
 * the connection cut, a statement not answered in time), not that the statement was wrong: worth
 * answering 503 and trying again. Whether a write in flight was applied is not known.
 */
export const databaseUnavailable = (e: unknown): boolean => {
  if (e instanceof StatementTimeout) return true;
  const code = errorCode(e);
  if (typeof code === "string" && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
  return e instanceof Error && CONNECTION_LOST.test(e.message);
};

export interface Db {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
  /**
   * How many statements it can run at once: a pool's size, 1 for a single connection. A tick on
   * one connection keeps one statement in flight (a second statement would only wait).
   * Absent: more than one.
   */
  readonly statementsAtOnce?: number;
  /** The most bytes one statement's result may be (Neon's HTTP endpoint): a tick's claims stay under it. Absent: no limit. */
  readonly maxResultBytes?: number;
  /** The driver a wrapper sends through (`fromPg`): createJobs listens for its idle connections' errors. */
  readonly driver?: unknown;
}

/**
 * Anything with a node-postgres style `query(text, params)`: a `pg` Pool,
 * Client or PoolClient (inside the caller's transaction), or a Neon `Pool` /
 * `Client`. The shape is structural, so no driver is imported here.
 */
export interface PgLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

type PgResult = { rows: unknown[]; rowCount: number | null };

/** A checked-out client of a pg / Neon Pool: `release(error)` removes and closes it. */
interface PooledClient extends PgLike {
  release(error?: Error | boolean): void;
}

/** A pg / Neon Pool, told apart from a Client by the counters only a pool has. */
interface PoolLike extends PgLike {
  connect(): Promise<PooledClient>;
  readonly totalCount: number;
}

const isPool = (c: unknown): c is PoolLike =>
  typeof (c as { connect?: unknown }).connect === "function" && typeof (c as { totalCount?: unknown }).totalCount === "number";

interface Emitter {
  on(event: string, listener: (...args: never[]) => void): unknown;
}
const hooked = new WeakSet<object>();

/**
 * Gives every client of `pool` an `error` listener when it is first checked out. A checked-out client
 * has no listener of the pool's, and its connection can die while it is out (a backend terminated, a
 * socket cut), even in the chunk of bytes that completed its connection, before whoever checked it
 * out could listen: an `error` event with no listener ends a Node process. The failure still reaches
 * the statement in flight, and the pool drops the client when it comes back.
 */
const hearCheckedOutClients = (pool: PoolLike): void => {
  const emitter = pool as unknown as Partial<Emitter>;
  if (hooked.has(pool) || typeof emitter.on !== "function") return;
  hooked.add(pool);
  const heard = new WeakSet<object>();
  // `acquire` is emitted as the pool hands a client out, before the bytes after it are read.
  emitter.on("acquire", (client: Partial<Emitter> & object) => {
    if (heard.has(client) || typeof client.on !== "function") return;
    heard.add(client);
    client.on("error", () => {});
  });
};

/** Less time than this left after the wait for a connection: the statement is not sent at all. */
const MIN_STATEMENT_MS = 10;

/**
 * Settles with `work`, or rejects with StatementTimeout after `ms` and calls
 * `onTimeout` (which destroys the connection). `work` is still observed, so a
 * late rejection is never unhandled.
 */
const bounded = <T>(work: Promise<T>, ms: number, onTimeout: () => void, reportedMs = ms): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      onTimeout();
      reject(new StatementTimeout(reportedMs));
    }, ms);
    work.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });

/**
 * Wraps a driver (or another `Db`) as a `Db`. A node-postgres or Neon Pool/Client
 * (recognised by its `connect`) runs hot statements as named prepared statements;
 * anything else gets the options passed through.
 */
export const fromPg = (client: PgLike | Db, adapter: { prepare?: boolean } = {}): Db => {
  const driver = typeof (client as { connect?: unknown }).connect === "function";
  // `prepare: false` for a pooler that cannot keep named statements (PgBouncer before 1.21 in transaction mode).
  const sender = preparedSender(adapter.prepare ?? true);
  const send = (on: PgLike, text: string, params: readonly unknown[], options?: QueryOptions): Promise<PgResult> =>
    sender(on, text, params as unknown[], options?.prepare === true);
  /** On a pool, the statement gets its own checked-out client, so a timeout can destroy exactly that connection. */
  const sendBounded = async (pool: PoolLike, text: string, params: readonly unknown[], options: QueryOptions & { timeoutMs: number }) => {
    hearCheckedOutClients(pool);
    const started = Date.now();
    let late = false;
    const checkout = pool.connect().then((c) => {
      // A connection that arrives after the timeout is not used here: back to the pool, which hands it to the
      // next waiter (released as broken, each late one cost a new connection: 20 after a stall of 20).
      if (late) c.release();
      return c;
    });
    const c = await bounded(checkout, options.timeoutMs, () => (late = true));
    // The bound is the whole call's, the wait for a connection included (a statement sent with 29 ms left
    // timed out saying "within 29 ms", and its healthy connection was destroyed).
    const left = options.timeoutMs - (Date.now() - started);
    if (left < MIN_STATEMENT_MS) {
      c.release();
      throw new StatementTimeout(options.timeoutMs);
    }
    let result: PgResult;
    try {
      result = await bounded(send(c, text, params, options), left, () => cancelOnServer(c), options.timeoutMs);
    } catch (error) {
      // A connection cut mid-statement leaves its backend running it (one waiting on a lock runs when the lock frees).
      if (databaseUnavailable(error) && !(error instanceof StatementTimeout)) cancelOnServer(c);
      // After a timeout the connection may still be waiting on the network: closing it destroys its socket.
      c.release(error instanceof Error ? error : true);
      throw error;
    }
    c.release();
    return result;
  };
  const statementsAtOnce = !driver
    ? (client as Db).statementsAtOnce
    : isPool(client) ? ((client as { options?: { max?: number } }).options?.max ?? 10) : 1;
  const query = (text: string, params: readonly unknown[], options?: QueryOptions): Promise<PgResult> => {
    if (!driver) return (client as Db).query(text, params, options);
    if (options?.timeoutMs !== undefined && isPool(client)) return sendBounded(client, text, params, { ...options, timeoutMs: options.timeoutMs });
    // A single Client (the caller's own): the wait is bounded; the connection is the caller's to close.
    if (options?.timeoutMs !== undefined) return bounded(send(client, text, params, options), options.timeoutMs, () => {});
    return send(client, text, params, options);
  };
  return {
    statementsAtOnce,
    maxResultBytes: driver ? undefined : (client as Db).maxResultBytes,
    // The driver, for its idle connections' error listener (see createJobs).
    driver: driver ? client : (client as Db).driver,
    async query<R>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
      let result: PgResult;
      try {
        result = await query(text, params, options);
      } catch (error) {
        throw asError(error);
      }
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    },
  };
};

/**
 * What a driver rejected with, as an Error. The Neon Pool rejects a WebSocket that fails to open
 * with its ErrorEvent, which an error handler that takes only Errors passes by (Hono's does): a
 * connection failure (08006) keeping the event's message and its inner error's code, if any.
 */
const asError = (error: unknown): unknown => {
  if (error instanceof Error || typeof error !== "object" || error === null) return error;
  const inner = (error as { error?: unknown }).error;
  const message = (error as { message?: unknown }).message;
  const text = typeof message === "string" && message !== "" ? message : inner instanceof Error ? inner.message : String(error);
  const code = errorCode(inner) ?? "08006";
  return Object.assign(new Error(`the database connection failed: ${text}`, { cause: error }), { code });
};

/**
 * A pool (or client) emits `error` when an idle connection dies (the server
 * restarted, `pg_terminate_backend`); without a listener Node ends the process.
 * The library listens on what it was given, unless the caller already does.
 */
export const logConnectionErrors = (driver: unknown, onError: (error: Error) => void): void => {
  const emitter = driver as { on?: unknown; listenerCount?: unknown };
  if (typeof emitter.on !== "function" || typeof emitter.listenerCount !== "function") return;
  const e = emitter as { on(event: "error", fn: (error: Error) => void): void; listenerCount(event: "error"): number };
  if (e.listenerCount("error") === 0) e.on("error", onError);
};

/** Neon's HTTP query function (`neon(url)`): one HTTP round trip per statement. */
export interface NeonHttpLike {
  query(
    text: string,
    params?: unknown[],
    opts?: { fullResults: true; fetchOptions?: { signal?: AbortSignal } },
  ): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export const fromNeonHttp = (sql: NeonHttpLike): Db => ({
  // Its responses are cut at 10 MiB (HTTP 507), counted in its own JSON, which escapes a json value's quotes again.
  maxResultBytes: 5 * 1024 * 1024,
  async query<R>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
    const ms = options?.timeoutMs;
    const controller = ms === undefined ? undefined : new AbortController();
    const request = sql.query(text, params as unknown[], { fullResults: true, ...(controller ? { fetchOptions: { signal: controller.signal } } : {}) });
    let result: Awaited<typeof request>;
    try {
      result = ms === undefined ? await request : await bounded(request, ms, () => controller!.abort(new StatementTimeout(ms)));
    } catch (error) {
      throw tooLargeRequest(error) ?? unreachedEndpoint(error) ?? error;
    }
    return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
  },
});

/**
 * Neon's HTTP endpoint refuses a request body over 10 MiB with HTTP 413 and no SQLSTATE. It is a
 * limit on what was sent, as a server's 54000 (program limit exceeded) is: given that code, a
 * batch that met it is retried in parts (settler.ts) instead of failing its tick.
 */
const tooLargeRequest = (error: unknown): Error | undefined => {
  const message = error instanceof Error ? error.message : "";
  if (!/HTTP status 413\b/.test(message)) return undefined;
  return Object.assign(new Error(`the statement was larger than the database's HTTP endpoint takes: ${message}`, { cause: error }), { code: "54000" });
};

/**
 * Neon's HTTP endpoint out of reach (the fetch failed) or failing (HTTP 5xx) says nothing of the
 * statement: a connection failure (08006), as the Pool reports one, so callers answer 503 and retry.
 * So does the endpoint's answer for a connection it could not make to the database (HTTP 400 with an
 * empty SQLSTATE, the message the connection's error: `connect ECONNREFUSED ...`).
 */
const unreachedEndpoint = (error: unknown): Error | undefined => {
  const code = errorCode(error);
  if (!(error instanceof Error) || (typeof code === "string" && code !== "")) return undefined;
  if (!/fetch failed|HTTP status 5\d\d\b|Error connecting to database|couldn't connect to compute|\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND)\b/i.test(error.message)) return undefined;
  return Object.assign(new Error(`the database's HTTP endpoint failed (the statement may have run): ${error.message}`, { cause: error }), { code: "08006" });
};

/** Counts statements, for the benchmark and for tests that check a tick's cost. */
export const countingDb = (db: Db): Db & { statements: number } => {
  const counted = {
    statements: 0,
    statementsAtOnce: db.statementsAtOnce,
    maxResultBytes: db.maxResultBytes,
    query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      counted.statements++;
      return db.query<R>(text, params, options);
    },
  };
  return counted;
};
