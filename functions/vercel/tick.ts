// Vercel Cron's target, on the Node.js runtime: GET /api/tick with Authorization: Bearer $CRON_SECRET.
// node-postgres over TCP (any PostgreSQL, Neon included); the pool lives for one request.
import { getDeadline } from "@vercel/functions";
import { deploymentApp } from "../../src/platform/deployment-app.js";
import { VERCEL_TICK } from "../../src/platform/budget.js";
import { pgPool } from "../../src/platform/pg.js";
import { deploymentJobs } from "../jobs.js";

const app = deploymentApp({
  env: process.env,
  connect: pgPool,
  jobs: deploymentJobs,
  // Vercel knows this invocation's deadline; without it (local runs, tests) maxDuration stands.
  platform: () => {
    const deadline = getDeadline();
    if (!deadline) return VERCEL_TICK;
    const left = deadline.getTime() - Date.now();
    return { ...VERCEL_TICK, limitMs: Math.min(VERCEL_TICK.limitMs, left), hardLimitMs: left };
  },
});

export const GET = (request: Request): Promise<Response> => Promise.resolve(app.fetch(request));
// The kick from the enqueue function posts here.
export const POST = GET;
