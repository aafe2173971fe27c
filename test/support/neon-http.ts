// A local implementation of Neon's SQL-over-HTTP endpoint (what `neon()` posts to)
// in front of the real test PostgreSQL: the transport is simulated, the SQL is real.
// Point the driver at it with neonConfig.fetchEndpoint (NEON_LOCAL_HTTP in the entrypoints).
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import pg from "pg";

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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    origin,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
};

interface SqlQuery {
  query: string;
  params?: unknown[];
}

// Every value as PostgreSQL's text, as Neon answers with Neon-Raw-Text-Output: the driver parses by type OID.
const rawText = { getTypeParser: () => (value: string) => value };

const ERROR_FIELDS = ["severity", "code", "detail", "hint", "position", "where", "schema", "table", "column", "dataType", "constraint"] as const;

const isLoopback = (url: string) => {
  try {
    return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
  } catch {
    return false;
  }
};

/**
 * POST /sql with `Neon-Connection-String` and a body of `{ query, params }` (one
 * statement) or `{ queries: [...] }` (a non-interactive transaction), answering
 * `{ fields, rows, rowCount, command }` (or `{ results: [...] }`) with rows as
 * arrays of text, and 400 with the PostgreSQL error's fields on failure.
 */
export const startNeonHttp = async (): Promise<Served & { readonly endpoint: string; statements: number }> => {
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
  const run = async (client: pg.PoolClient, q: SqlQuery) => {
    state.statements++;
    const result = await client.query({ text: q.query, values: q.params ?? [], rowMode: "array", types: rawText });
    return {
      fields: result.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
      rows: result.rows,
      rowCount: result.rowCount,
      command: result.command,
    };
  };
  const served = await serveFetch(async (request) => {
    const url = request.headers.get("neon-connection-string") ?? "";
    if (request.method !== "POST" || new URL(request.url).pathname !== "/sql") return Response.json({ message: "not found" }, { status: 404 });
    // Loopback only: this endpoint exists for tests on this machine.
    if (!isLoopback(url)) return Response.json({ message: "connection string must point at this machine" }, { status: 400 });
    const body = (await request.json()) as SqlQuery | { queries: SqlQuery[] };
    const client = await poolFor(url).connect();
    try {
      if ("queries" in body) {
        await client.query("BEGIN");
        const results = [];
        for (const q of body.queries) results.push(await run(client, q));
        await client.query("COMMIT");
        return Response.json({ results });
      }
      return Response.json(await run(client, body));
    } catch (error) {
      if ("queries" in body) await client.query("ROLLBACK").catch(() => {});
      const e = error as Error & Record<string, unknown>;
      return Response.json({ message: e.message, ...Object.fromEntries(ERROR_FIELDS.map((k) => [k, e[k]])) }, { status: 400 });
    } finally {
      client.release();
    }
  });
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
