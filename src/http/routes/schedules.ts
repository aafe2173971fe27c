import { Hono } from "hono";
import { type ApiConfig, type ApiEnv, notifyEnqueued } from "../api-context.js";
import { intParam, queryParams } from "../params.js";

/** Schedules are defined in code; the API lists them and pauses, resumes or runs one (`not_found` for other names). */
export const scheduleRoutes = (config: ApiConfig) => {
  const r = new Hono<ApiEnv>();

  r.get("/schedules", async (c) => {
    const q = queryParams(c, ["next"]);
    const next = intParam(q.next, "next");
    const jobs = await c.get("jobs")();
    return c.json({ items: await jobs.schedules.list(next === undefined ? {} : { next }) });
  });

  r.post("/schedules/:name/pause", async (c) => {
    const jobs = await c.get("jobs")();
    return c.json(await jobs.schedules.pause(c.req.param("name")));
  });

  r.post("/schedules/:name/resume", async (c) => {
    const jobs = await c.get("jobs")();
    return c.json(await jobs.schedules.resume(c.req.param("name")));
  });

  r.post("/schedules/:name/run", async (c) => {
    const jobs = await c.get("jobs")();
    const { id } = await jobs.schedules.runNow(c.req.param("name"));
    await notifyEnqueued(config, c, [id], true);
    return c.json({ id }, 201);
  });

  return r;
};
