// The parts of the Workers runtime types the worker uses (no @cloudflare/workers-types needed).
import type { Env } from "../settings/library.js";

export interface WorkerExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
  readonly props: unknown;
}

export interface WorkerScheduledController {
  readonly scheduledTime: number;
  readonly cron: string;
  noRetry(): void;
}

/**
 * Workers bindings hold strings (secrets, vars), numbers and booleans (vars written unquoted in
 * wrangler.toml: `JOBS_MAX_TICKS = 1`) and objects (KV, Hyperdrive...). Settings read the first two
 * kinds as the text they were written as; dropped, `JOBS_MAX_TICKS = 1` left the cap at its default.
 */
export const stringEnv = (bindings: Record<string, unknown>): Env =>
  Object.fromEntries(
    Object.entries(bindings).flatMap(([k, v]) => (typeof v === "string" ? [[k, v]] : typeof v === "number" || typeof v === "boolean" ? [[k, String(v)]] : [])),
  );

/** A service binding: `env.SELF.fetch(...)` reaches this worker again as a new invocation. */
export interface WorkerFetcher {
  fetch(request: Request): Promise<Response>;
}
