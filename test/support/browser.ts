// Headless Chromium from Debian's package, driven by playwright-core (never a
// downloaded browser), and a minimal node:http server so the browser can reach
// a Hono app's fetch handler on 127.0.0.1.
import { mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { Hono } from "hono";
import { z } from "zod";
import { createDashboard, type DashboardOptions } from "../../src/dashboard/dashboard-app.js";
import { defineJob, PermanentJobError } from "../../src/index.js";
import type { Harness } from "./harness.js";

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

// The dashboard under test: jobs that fail on demand, mounted as the HTTP app mounts it.

export const PASSWORD = "correct horse battery staple";

/** Jobs whose failures the tests switch on and off, to make dead letters the way production does. */
export const fixtureJobs = () => {
  const state = { broken: true, ran: [] as string[] };
  const sync = defineJob({
    name: "sync-account",
    schema: z.object({ account: z.string() }),
    maxAttempts: 1,
    handler: (p) => {
      if (state.broken) throw new PermanentJobError(`upstream refused account ${p.account}`);
      state.ran.push(`sync:${p.account}`);
    },
  });
  const email = defineJob({
    name: "send-email",
    schema: z.object({ to: z.email(), subject: z.string().min(1) }),
    maxAttempts: 1,
    handler: (p) => {
      if (p.to.endsWith("@bounce.test")) throw new PermanentJobError(`mailbox ${p.to} bounced`);
      state.ran.push(`email:${p.to}`);
    },
  });
  const note = defineJob({
    name: "note",
    schema: z.object({ text: z.string() }),
    maxAttempts: 1,
    handler: (p) => {
      throw new PermanentJobError(`could not store ${p.text}`);
    },
  });
  return { state, defs: [sync, email, note] as const };
};

/** The dashboard mounted at /dashboard the way the HTTP app mounts it. */
export const dashboardApp = (jobs: DashboardOptions["jobs"], env: Record<string, string> = { DASHBOARD_PASSWORD: PASSWORD }) => {
  const app = new Hono();
  app.route("/dashboard", createDashboard({ jobs, env }));
  return app;
};

export const deadCount = async (h: Harness, job?: string): Promise<number> => {
  const rows = await h.rows<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs_dead_letters ${job ? "WHERE job_name = $1" : ""}`,
    job ? [job] : [],
  );
  return rows[0]!.n;
};

export const queuedCount = async (h: Harness, job?: string): Promise<number> => {
  const rows = await h.rows<{ n: number }>(`SELECT count(*)::int AS n FROM jobs_queue ${job ? "WHERE job_name = $1" : ""}`, job ? [job] : []);
  return rows[0]!.n;
};
