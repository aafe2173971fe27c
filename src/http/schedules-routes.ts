import { Hono } from "hono";
import { JobsError } from "../errors.js";
import type { AnyJobs, ApiConfig, ApiEnv } from "./context.js";
import { notifyEnqueued } from "./context.js";
import { intParam, queryParams } from "./params.js";

/**
 * The part of `jobs.schedules` the API uses. Typed structurally so this module
 * does not depend on how the schedules feature is wired into `createJobs`.
 */
export interface SchedulesLike {
  list(options?: { next?: number }): Promise<unknown[]>;
  pause(name: string): Promise<unknown>;
  resume(name: string): Promise<unknown>;
  runNow(name: string): Promise<unknown>;
}

export const schedulesOf = (jobs: AnyJobs): SchedulesLike | undefined => {
  const s = (jobs as { schedules?: unknown }).schedules;
  return typeof s === "object" && s !== null && "list" in s ? (s as SchedulesLike) : undefined;
};

export const MAX_NEXT_RUNS = 20;

/** The enqueued job's id, when `runNow` says it (`{ id }`, `{ jobId }` or the id itself). */
const enqueuedId = (result: unknown): string | undefined => {
  if (typeof result === "string") return result;
  if (typeof result === "object" && result !== null) {
    const r = result as { id?: unknown; jobId?: unknown; deduplicated?: unknown };
    if (r.deduplicated === true) return undefined;
    if (typeof r.jobId === "string") return r.jobId;
    if (typeof r.id === "string") return r.id;
  }
  return undefined;
};

export const scheduleRoutes = (config: ApiConfig) => {
  const r = new Hono<ApiEnv>();
  const need = async (get: () => Promise<AnyJobs>, name: string): Promise<SchedulesLike> => {
    const schedules = schedulesOf(await get());
    if (!schedules) throw new JobsError("not_found", `no schedule named ${JSON.stringify(name)}: this deployment defines no schedules`, { name });
    return schedules;
  };

  r.get("/schedules", async (c) => {
    const q = queryParams(c, ["next"]);
    const next = intParam(q.next, "next");
    if (next !== undefined && next > MAX_NEXT_RUNS) {
      throw new JobsError("invalid_options", `next must be at most ${MAX_NEXT_RUNS}`, { field: "next" });
    }
    const schedules = schedulesOf(await c.get("jobs")());
    return c.json({ items: schedules ? await schedules.list(next === undefined ? {} : { next }) : [] });
  });

  r.post("/schedules/:name/pause", async (c) => {
    const name = c.req.param("name");
    return c.json({ schedule: await (await need(c.get("jobs"), name)).pause(name) });
  });

  r.post("/schedules/:name/resume", async (c) => {
    const name = c.req.param("name");
    return c.json({ schedule: await (await need(c.get("jobs"), name)).resume(name) });
  });

  r.post("/schedules/:name/run", async (c) => {
    const name = c.req.param("name");
    const result = await (await need(c.get("jobs"), name)).runNow(name);
    const id = enqueuedId(result);
    await notifyEnqueued(config, c, id ? [id] : [], true);
    return c.json(typeof result === "object" && result !== null ? result : { id: result }, 201);
  });

  return r;
};
