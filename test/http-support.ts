// Helpers for the HTTP tests: requests through the real app (app.request builds a web Request).
import type { Hono } from "hono";

export const API_TOKENS = "token-old-0123456789, token-new-9876543210";
export const OLD_TOKEN = "token-old-0123456789";
export const NEW_TOKEN = "token-new-9876543210";
export const CRON_SECRET = "cron-secret-abcdefghij";

export interface Call {
  status: number;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON from the wire, asserted field by field
  headers: Headers;
}

export const caller =
  (app: Hono) =>
  async (
    method: string,
    path: string,
    options: { json?: unknown; raw?: BodyInit; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<Call> => {
    const headers = new Headers(options.headers);
    const token = options.token === undefined ? NEW_TOKEN : options.token;
    if (token !== null) headers.set("authorization", `Bearer ${token}`);
    let body: BodyInit | undefined = options.raw;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
    }
    const res = await app.request(path, { method, headers, body, ...(body instanceof ReadableStream ? { duplex: "half" } : {}) } as RequestInit);
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      /* left as text: tests assert JSON where they expect it */
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };

/** A body stream with no Content-Length (sent chunked), `chunks` pieces of `size` bytes. */
export const chunkedBody = (chunks: number, size: number, fill = "a"): ReadableStream<Uint8Array> => {
  let sent = 0;
  const piece = new TextEncoder().encode(fill.repeat(size));
  return new ReadableStream({
    pull(controller) {
      if (sent++ >= chunks) controller.close();
      else controller.enqueue(piece);
    },
  });
};

/**
 * Serves the app on 127.0.0.1 through node:http (a real socket, real HTTP
 * parsing), translating to and from web Request/Response. Close it after.
 */
export const serveOnLoopback = async (app: Hono): Promise<{ url: string; close: () => Promise<void> }> => {
  const { createServer } = await import("node:http");
  const { Readable } = await import("node:stream");
  const server = createServer((req, res) => {
    void (async () => {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const hasBody = req.method !== "GET" && req.method !== "HEAD";
      const request = new Request(`http://127.0.0.1${req.url ?? "/"}`, {
        method: req.method,
        headers,
        body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : undefined,
        ...(hasBody ? { duplex: "half" } : {}),
      } as RequestInit);
      const response = await app.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch(() => {
      res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
