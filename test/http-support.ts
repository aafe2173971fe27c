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
