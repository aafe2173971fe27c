import type { Context, Hono } from "hono";
import { createApp } from "../http/api-app.js";
import { jobsFromModule } from "../module/jobs-module.js";
import type { Env } from "../settings/parse.js";
import { unknownVariables } from "../settings/catalog.js";
import { jsonLogger } from "../log.js";
import type { TickReport } from "../tick/types.js";
import { platformSettings } from "./budget.js";
import { checkKickSettings } from "./kick.js";
import type { Connection } from "./connection.js";
import type { Deployment } from "./invocation.js";
import type { TickRequest } from "../http/tick-request.js";
import type { OpenApiDocument, PayloadSchemas } from "../http/payload-schemas.js";

export interface DeploymentApp extends Deployment {
  /** Opens a connection for one API request; the app closes it when the response is done. */
  readonly connectRequest: (env: Env) => Connection;
  /** Runs the tick `/api/tick` asks for (its own connection, budget and spawn). */
  readonly tick: (req: TickRequest, c: Context) => Promise<TickReport>;
  /** Keeps work alive past the response (`waitUntil`), so async tick requests are answered at once. */
  readonly background?: (work: Promise<unknown>, c: Context) => void;
  /** After an enqueue, replay or schedule run (API or dashboard) put a job in the queue that is due now. */
  readonly onDueNow?: (c: Context) => void;
  /** How /api/openapi.json describes payloads, and what serves it (see AppOptions). */
  readonly payloadSchemas?: PayloadSchemas;
  readonly openApi?: OpenApiDocument;
}

/** Names already warned about in this isolate: a Worker's cron and its app each warn, once between them. */
const warned = new Set<string>();

/** A misspelt variable (JOBS_CONCURENCY) would otherwise be ignored without a word: said once per isolate. */
export const warnUnknownSettings = (env: Env): void => {
  for (const name of unknownVariables(env)) {
    if (warned.has(name)) continue;
    warned.add(name);
    jsonLogger().log("warn", `${name} is no setting a deployment reads; it is ignored`);
  }
};

/**
 * The library's Hono app as a platform deploys it: a connection per request
 * (opened on first use, closed after the response), `/api/tick` run the
 * platform's way, and the kick hook on enqueues of jobs that are due now.
 */
export const deploymentApp = (d: DeploymentApp): Hono => {
  warnUnknownSettings(d.env);
  return createApp({
    env: d.env,
    jobs: async () => {
      // Fails at the first request, with the variable named, when a setting is wrong.
      const settings = platformSettings(d.env, d.platform(), d.module.settings);
      checkKickSettings(d.env);
      const connection = d.connectRequest(d.env);
      try {
        return { jobs: jobsFromModule(d.module, { db: connection.db, settings }), dispose: () => connection.close() };
      } catch (error) {
        // No dispose is returned on failure, so the connection is closed here.
        await connection.close();
        throw error;
      }
    },
    tick: d.tick,
    background: d.background,
    payloadSchemas: d.payloadSchemas,
    openApi: d.openApi,
    onEnqueued: d.onDueNow ? ({ dueNow }, c) => (dueNow ? d.onDueNow!(c) : undefined) : undefined,
  });
};
