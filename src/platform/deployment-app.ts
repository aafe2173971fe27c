import type { Context, Hono } from "hono";
import type { Env, JobsSettings } from "../settings/library.js";
import type { Db } from "../db.js";
import { createApp } from "../http/api-app.js";
import type { AnyJob } from "../job.js";
import type { Jobs } from "../jobs.js";
import { kickBudgetMs, type PlatformLimit, platformSettings } from "./budget.js";
import type { Connection } from "./connection.js";
import { KICK_HEADER } from "./invocation.js";

export interface DeploymentApp {
  readonly env: Env;
  /** Opens a connection for one request; the app closes it when the response is done. */
  readonly connect: (env: Env) => Connection;
  readonly jobs: (db: Db, settings: JobsSettings) => Jobs<readonly AnyJob[]>;
  /** The limit `/api/tick` runs under, read per request (Vercel knows each invocation's deadline). */
  readonly platform: () => PlatformLimit;
  /** Called after an enqueue through the API put at least one job in the queue that is due now. */
  readonly onDueNow?: (c: Context) => void | Promise<void>;
}

/**
 * The library's Hono app as a platform deploys it: a connection per request
 * (opened on first use, closed after the response), `/api/tick` with the
 * platform budget (or the short kick budget when the kick header is set), and
 * the kick hook on enqueues of jobs that are due now.
 */
export const deploymentApp = (d: DeploymentApp): Hono => {
  // Fail at the first request, with the variable named, when a setting is wrong.
  const settingsFor = () => platformSettings(d.env, d.platform());
  return createApp({
    env: d.env,
    jobs: async () => {
      const settings = settingsFor();
      const connection = d.connect(d.env);
      try {
        return { jobs: d.jobs(connection.db, settings), dispose: () => connection.close() };
      } catch (error) {
        // No dispose is returned on failure, so the connection is closed here.
        await connection.close();
        throw error;
      }
    },
    tickOptions: (c) => {
      const budgetMs = settingsFor().tickBudgetMs;
      return { budgetMs: c.req.header(KICK_HEADER) === "1" ? kickBudgetMs(d.env, budgetMs) : budgetMs };
    },
    onEnqueued: d.onDueNow ? ({ dueNow }, c) => (dueNow ? d.onDueNow!(c) : undefined) : undefined,
  });
};
