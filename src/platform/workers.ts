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

/** Workers bindings hold strings (vars, secrets) and objects (KV, Hyperdrive...); settings read only the strings. */
export const stringEnv = (bindings: Record<string, unknown>): Env =>
  Object.fromEntries(Object.entries(bindings).filter((e): e is [string, string] => typeof e[1] === "string"));

/** A service binding: `env.SELF.fetch(...)` reaches this worker again as a new invocation. */
export interface WorkerFetcher {
  fetch(request: Request): Promise<Response>;
}
