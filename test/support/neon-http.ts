// A local implementation of Neon's SQL-over-HTTP endpoint (what `neon()` posts to)
// in front of the real test PostgreSQL: the transport is simulated, the SQL is real,
// and the proxy's limits are kept, so what fails on Neon fails here.
// Point the driver at it with neonConfig.fetchEndpoint (NEON_LOCAL_HTTP in the entrypoints).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import pg from "pg";
import { errorBody, NEON_MAX_REQUEST_BYTES, NEON_MAX_RESPONSE_BYTES, Output, ProxyError, requestTooLarge, writeResult } from "./neon-http-wire.js";

export interface Served {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
  close(): Promise<void>;
}

const toRequest = async (req: IncomingMessage, origin: string): Promise<Request> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), { method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined });
};

const send = async (res: ServerResponse, response: Response) => {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.end(Buffer.from(await response.arrayBuffer()));
};

const listen = async (server: Server): Promise<Served> => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return {
    origin: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
};

/** Serves a fetch-style handler on 127.0.0.1 over real HTTP (what a platform's front end does for a function). */
export const serveFetch = async (handler: (request: Request) => Response | Promise<Response>): Promise<Served> => {
  let origin = "";
  const server = createServer((req, res) => {
    void (async () => {
      try {
        await send(res, await handler(await toRequest(req, origin)));
      } catch (error) {
        res.statusCode = 500;
        res.end(String(error));
      }
    })();
  });
  const served = await listen(server);
  origin = served.origin;
  return served;
};

interface SqlQuery {
  query: string;
  params?: unknown[];
}

// Every value as PostgreSQL's text, as Neon answers with Neon-Raw-Text-Output: the driver parses by type OID.
const rawText = { getTypeParser: () => (value: string) => value };

const isLoopback = (url: string) => {
  try {
    return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
  } catch {
    return false;
  }
};

/**
 * Reads a request body of at most `limit` bytes, as the proxy's `read_body_with_limit`:
 * a `Content-Length` over the limit, or more bytes than it, is `413`. The rest is
 * read and dropped, not kept: answering before the client finished sending would
 * reset its upload instead of showing it the answer.
 */
const readBody = async (req: IncomingMessage, limit: number): Promise<Buffer> => {
  let tooLarge = Number(req.headers["content-length"] ?? 0) > limit;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    if (tooLarge) continue;
    size += (chunk as Buffer).length;
    if (size > limit) {
      tooLarge = true;
      chunks.length = 0;
    } else chunks.push(chunk as Buffer);
  }
  if (tooLarge) throw requestTooLarge(limit);
  return Buffer.concat(chunks);
};

const parseBody = (body: Buffer): SqlQuery | { queries: SqlQuery[] } => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch (error) {
    throw new ProxyError(400, `could not parse the HTTP request body: ${(error as Error).message}`);
  }
  const p = parsed as Partial<SqlQuery & { queries: SqlQuery[] }> | null;
  if (typeof p?.query === "string" || Array.isArray(p?.queries)) return p as SqlQuery | { queries: SqlQuery[] };
  throw new ProxyError(400, "could not parse the HTTP request body: data did not match any variant of untagged enum Payload");
};

export { NEON_MAX_REQUEST_BYTES, NEON_MAX_RESPONSE_BYTES } from "./neon-http-wire.js";

export interface NeonHttpLimits {
  /** Largest request body in bytes; Neon's is 10 MiB (`NEON_MAX_REQUEST_BYTES`). */
  readonly maxRequestBytes?: number;
  /** Largest response body in bytes, checked after each row; Neon's is 10 MiB (`NEON_MAX_RESPONSE_BYTES`). */
  readonly maxResponseBytes?: number;
}

export type NeonHttp = Served & { readonly endpoint: string; statements: number };

/**
 * POST /sql with `Neon-Connection-String` and a body of `{ query, params }` (one
 * statement) or `{ queries: [...] }` (a non-interactive transaction), answering
 * `{ rowAsArray, fields, rows, command, rowCount }` (or `{ results: [...] }`) with rows
 * as arrays of text. As strict as Neon's proxy: one statement per query (each is
 * parsed with the extended protocol, so `SELECT 1; SELECT 2` fails with 42601), a
 * request body over `maxRequestBytes` is 413, and a response that passes
 * `maxResponseBytes` as rows are added is 507. A PostgreSQL error is 400; every error
 * body has the proxy's keys (see neon-http-wire.ts).
 */
export const startNeonHttp = async (limits: NeonHttpLimits = {}): Promise<NeonHttp> => {
  const maxRequest = limits.maxRequestBytes ?? NEON_MAX_REQUEST_BYTES;
  const maxResponse = limits.maxResponseBytes ?? NEON_MAX_RESPONSE_BYTES;
  const pools = new Map<string, pg.Pool>();
  const poolFor = (url: string) => {
    let pool = pools.get(url);
    if (!pool) {
      pools.set(url, (pool = new pg.Pool({ connectionString: url, max: 10 })));
      // A test dropping its database ends these idle connections; that is expected here.
      pool.on("error", () => {});
    }
    return pool;
  };
  const run = async (client: pg.PoolClient, q: SqlQuery, out: Output) => {
    state.statements++;
    // `queryMode: "extended"`: a Parse message even without parameters, as the proxy's
    // `query_raw_txt` sends, so PostgreSQL refuses a string of several statements.
    const config: pg.QueryArrayConfig & { queryMode: "extended" } = {
      text: q.query,
      values: q.params ?? [],
      rowMode: "array",
      types: rawText,
      queryMode: "extended",
    };
    writeResult(out, await client.query<Array<string | null>>(config));
  };
  const answer = async (req: IncomingMessage): Promise<{ status: number; body: string }> => {
    const url = String(req.headers["neon-connection-string"] ?? "");
    // Loopback only: this endpoint exists for tests on this machine.
    if (!isLoopback(url)) throw new ProxyError(400, "connection string must point at this machine");
    const body = parseBody(await readBody(req, maxRequest));
    const out = new Output(maxResponse);
    const client = await poolFor(url).connect();
    try {
      if (!("queries" in body)) {
        await run(client, body, out);
        return { status: 200, body: out.text() };
      }
      await client.query("BEGIN");
      try {
        out.push(`{"results":[`);
        for (const [i, q] of body.queries.entries()) {
          if (i > 0) out.push(",");
          await run(client, q, out);
        }
        out.push("]}");
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
      return { status: 200, body: out.text() };
    } finally {
      client.release();
    }
  };
  const respond = async (req: IncomingMessage): Promise<{ status: number; body: string }> => {
    if (req.method !== "POST" || new URL(req.url ?? "/", "http://x").pathname !== "/sql") {
      req.resume();
      return { status: 404, body: JSON.stringify({ message: "not found" }) };
    }
    try {
      return await answer(req);
    } catch (error) {
      const e = errorBody(error);
      return { status: e.status, body: JSON.stringify(e.body) };
    }
  };
  const server = createServer((req, res) => {
    void respond(req).then(({ status, body }) => {
      res.writeHead(status, { "content-type": "application/json", "access-control-allow-origin": "*" });
      res.end(body);
    });
  });
  const served = await listen(server);
  const state = {
    ...served,
    endpoint: `${served.origin}/sql`,
    statements: 0,
    async close() {
      await served.close();
      await Promise.all([...pools.values()].map((p) => p.end()));
    },
  };
  return state;
};
