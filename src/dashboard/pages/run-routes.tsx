/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { isJobsError } from "../../errors.js";
import type { DashboardContext } from "../dashboard-app.js";
import type { RunOutcome } from "../../store/runs/run-views.js";
import { enqueued, formText, names, q, type Routes, userError } from "../dashboard-context.js";
import { Page } from "../layout.js";
import { type RunFilter, RunDetail, RunsList } from "./runs.js";

/** A time from the form's datetime-local field (no zone) is read as UTC, as the label says. */
const utcTime = (v: string | undefined) => (v && v.includes("T") && !/(Z|[+-]\d\d:?\d\d)$/i.test(v) ? `${v}Z` : v);

/** The run history's pages: search, one run, and Run again. */
export const runPages: Routes = (app, deps) => {
  const { base } = deps;

  app.get("/runs", async (c) => {
    const jobs = c.var.jobs;
    const keys = ["job", "outcome", "correlationId", "idempotencyKey", "jobId", "since", "until", "cursor"] as const;
    const filter: RunFilter = Object.fromEntries(keys.map((k) => [k, q(c.req.query(k))]));
    const props = { base, csrf: c.var.session.csrf, names: names(c, jobs), filter };
    try {
      const page = await jobs.runs.list({ ...filter, outcome: filter.outcome as RunOutcome | undefined, since: utcTime(filter.since), until: utcTime(filter.until) });
      return c.html(<RunsList {...props} page={page} />);
    } catch (e) {
      return c.html(<RunsList {...props} error={userError(e)} />, 400);
    }
  });

  const show = async (c: DashboardContext, id: string, alert?: string, status: 200 | 404 | 422 = 200) => {
    const jobs = c.var.jobs;
    const run = await jobs.runs.get(id);
    const csrf = c.var.session.csrf;
    if (!run) {
      return c.html(
        <Page title="Not found" base={base} section="runs" csrf={csrf}>
          <p>There is no such run: the history no longer keeps it, or it never existed.</p>
          <p>
            <a href={`${base}/runs`}>Back to the runs</a>
          </p>
        </Page>,
        404,
      );
    }
    const attempts = (await jobs.runs.list({ jobId: run.jobId, limit: 100 })).items.reverse();
    return c.html(<RunDetail base={base} csrf={csrf} run={run} attempts={attempts} alert={alert} />, status);
  };

  app.get("/runs/:id", (c) => show(c, c.req.param("id")));

  app.post("/runs/:id/rerun", async (c) => {
    const id = c.req.param("id");
    try {
      const once = formText(c.var.form.once);
      const key = once && /^[0-9a-f-]{36}$/.test(once) ? `dashboard:rerun:${once}` : undefined;
      // The page's token dedupes while its job is queued or running; once that job has run, its run in the
      // history holds the key: a second click then shows that job instead of queueing another.
      const before = key ? (await c.var.jobs.runs.list({ idempotencyKey: key, limit: 1 })).items[0] : undefined;
      if (before) return c.redirect(`${base}/jobs/${before.jobId}?done=rerun`, 303);
      const done = await c.var.jobs.runs.rerun(id, key ? { idempotencyKey: key } : {});
      await enqueued(deps, c, [done.id]);
      return c.redirect(`${base}/jobs/${done.id}?done=rerun`, 303);
    } catch (e) {
      if (!isJobsError(e)) throw e;
      // Gone from the history (404), or a payload the job's schema now refuses (422): said on the run's page.
      return show(c, id, `Not run again: ${e.message}. Nothing was queued.`, e.code === "not_found" ? 404 : 422);
    }
  });
};
