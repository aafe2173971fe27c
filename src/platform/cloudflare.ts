// `pgtick/cloudflare`: the Worker. `fetch` serves the API and the dashboard; `scheduled` runs the
// minute tick. A tick that finds more work than it can take starts more ticks through the service
// binding SELF (this worker bound to itself in wrangler.toml), each a new invocation of its own.
import type { OpenApiDocument, PayloadSchemas } from "../http/payload-schemas.js";
import type { Context } from "hono";
import type { Hono } from "hono";
import type { JobsModule } from "../module/jobs-module.js";
import { read } from "../settings/catalog.js";
import type { Env } from "../settings/parse.js";
import type { Handoff } from "../tick/types.js";
import { kickEnabled, WORKERS_SCHEDULED } from "./budget.js";
import { deploymentApp, warnUnknownSettings } from "./deployment-app.js";
import { type Deployment, runInvocationTick, wakeDeployment } from "./invocation.js";
import { coalesced, tickAnswered } from "./kick.js";
import { neonForRequest, neonPool } from "./neon.js";
import { type TickRequest, tickRequest } from "../http/tick-request.js";
import { stringEnv, type WorkerExecutionContext, type WorkerFetcher, type WorkerScheduledController } from "./workers.js";

/** The shape of a jobs module, the argument of this entry point. */
export type { JobsModule } from "../module/jobs-module.js";
export type { WorkerExecutionContext, WorkerScheduledController } from "./workers.js";

/** What `cloudflareWorker` returns: the Worker's default export (its fetch and scheduled handlers). */
export interface CloudflareWorker {
  fetch(request: Request, bindings: object, ctx: WorkerExecutionContext): Promise<Response>;
  scheduled(controller: WorkerScheduledController, bindings: object, ctx: WorkerExecutionContext): Promise<void>;
}

/** A kick's tick ends within its budget (10 s by default), and a request's waitUntil within 30 s of its response. */
const KICK_STALE_MS = 60_000;

/** The name of the service binding to the worker itself (wrangler.toml's `[[services]]`). */
export const SELF_BINDING = "SELF";

/**
 * Extra ticks through SELF. The caller keeps each alive with `waitUntil` (a service
 * binding call the caller stops waiting for is cancelled). Needs CRON_SECRET, which
 * `/api/tick` asks of every caller; without it or without the binding, no fan-out.
 */
const spawnThrough = (bindings: Record<string, unknown>, env: Env, ctx: WorkerExecutionContext) => {
  const self = bindings[SELF_BINDING] as WorkerFetcher | undefined;
  const secret = read(env, "CRON_SECRET");
  if (!self || typeof self.fetch !== "function" || !secret) return undefined;
  // The tick hears of a refusal (its slot is then freed); the call answers when the extra tick has run.
  return (handoffs: readonly Handoff[]) => {
    const sent = Promise.all(handoffs.map((handoff) => self.fetch(tickRequest("https://self/api/tick", secret, { handoff })).then(tickAnswered)));
    ctx.waitUntil(sent.catch(() => {}));
    return sent;
  };
};

export interface CloudflareOptions {
  /**
   * How /api/openapi.json describes each job's payload. Absent: as checked by the server, keeping zod's
   * JSON Schema converter (about 7 KB gzipped) out of the bundle; `zodPayloadSchemas` from `pgtick/http` adds it.
   */
  readonly payloadSchemas?: PayloadSchemas;
  /**
   * What serves /api/openapi.json: absent, that route answers 404 `no_route` and the document's code
   * (about 4 KB gzipped) stays out of the bundle; `openApiDocument` from `pgtick/http` serves it.
   */
  readonly openApi?: OpenApiDocument;
}

export const cloudflareWorker = (module: JobsModule, options: CloudflareOptions = {}): CloudflareWorker => {
  // Bindings are fixed per deployment, so the app is built at the first request.
  let built: { app: Hono; kick: () => Promise<void> } | undefined;
  let kickCtx: WorkerExecutionContext | undefined;

  // One connection per tick: the ticks a cron delivery starts through SELF share its six simultaneous connections.
  const deployment = (env: Env): Deployment => ({ module, env, platform: () => WORKERS_SCHEDULED, connect: (e) => neonPool(e, 1) });

  const build = (bindings: Record<string, unknown>) => {
    const env = stringEnv(bindings);
    const d = deployment(env);
    // The kick: a tick in this isolate, kept alive with waitUntil, unless one running here has room already.
    // Each request waits only on its own work (a request kept alive on another's kick was cancelled as hung,
    // and the kick with it, leaving this isolate no kick for good); a kick still going after a minute is
    // taken for lost. The ticks it starts through SELF are kept alive by the request whose kick runs.
    const kick = coalesced(() => runInvocationTick(d, { kick: true }, { spawn: kickCtx && spawnThrough(bindings, env, kickCtx) }), undefined, {
      join: false,
      staleAfterMs: KICK_STALE_MS,
    });
    const app = deploymentApp({
      ...d,
      connectRequest: neonForRequest,
      payloadSchemas: options.payloadSchemas,
      openApi: options.openApi,
      tick: (req: TickRequest, c: Context) => runInvocationTick(d, req, { spawn: spawnThrough(bindings, env, c.executionCtx as WorkerExecutionContext) }),
      onDueNow: (c) => {
        if (!kickEnabled(env) || wakeDeployment(d)) return;
        if (!kick.busy()) kickCtx = c.executionCtx as WorkerExecutionContext;
        c.executionCtx.waitUntil(kick());
      },
    });
    return { app, kick };
  };

  return {
    // `object`: the Env `wrangler types` writes is an interface, which has no index signature (a typed Worker did not compile).
    fetch(request: Request, bindings: object, ctx: WorkerExecutionContext): Promise<Response> {
      built ??= build(bindings as Record<string, unknown>);
      return Promise.resolve(built.app.fetch(request, bindings, ctx));
    },
    /** The Cron Trigger's tick, kept alive with waitUntil until it has requeued what runs and closed its pool. */
    async scheduled(_controller: WorkerScheduledController, given: object, ctx: WorkerExecutionContext): Promise<void> {
      const bindings = given as Record<string, unknown>;
      const env = stringEnv(bindings);
      // A Worker that only runs from its cron builds no app, and would never say so.
      warnUnknownSettings(env);
      const done = runInvocationTick(deployment(env), {}, { spawn: spawnThrough(bindings, env, ctx) });
      ctx.waitUntil(done);
      await done;
    },
  };
};
