// Headless Chromium from Debian's package, driven by playwright-core (never a
// downloaded browser), and a minimal node:http server so the browser can reach
// a Hono app's fetch handler on 127.0.0.1.
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: ARGS });

export type FetchHandler = (request: Request) => Response | Promise<Response>;

export interface Served {
  readonly url: string;
  close(): Promise<void>;
}

const toRequest = async (req: IncomingMessage, origin: string): Promise<Request> => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const method = req.method ?? "GET";
  const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
  return new Request(new URL(req.url ?? "/", origin), { method, headers, body });
};

const write = async (res: ServerResponse, response: Response) => {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") headers[name] = value;
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  res.writeHead(response.status, headers);
  res.end(response.body ? Buffer.from(await response.arrayBuffer()) : undefined);
};

/** Serves a fetch handler on a free port of 127.0.0.1 until `close`. */
export const serve = async (handler: FetchHandler): Promise<Served> => {
  let origin = "";
  const server = createServer((req, res) => {
    void (async () => {
      try {
        await write(res, await handler(await toRequest(req, origin)));
      } catch (error) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`test server: ${(error as Error).message}`);
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export const RESULTS = join(process.cwd(), "test-results", "dashboard");

/** Saves a full-page screenshot as test-results/dashboard/<name>.png, for people to look at. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(RESULTS, { recursive: true });
  const path = join(RESULTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
};
