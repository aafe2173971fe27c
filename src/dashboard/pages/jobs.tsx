/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { isJobsError } from "../../errors.js";
import { type AnyJobs, enqueued, names, q, type Routes, userError } from "../dashboard-context.js";
import { noticeFor } from "../notices.js";
import { JobDetail, JobNotFound } from "./job-detail.js";
import { JobsList, STATUSES } from "./jobs-list.js";

type Status = (typeof STATUSES)[number];

/** The jobs pages' routes: the list, one job (live: its status as it runs), cancel and run now. */
export const jobPages: Routes = (app, deps) => {
  const { base } = deps;

  app.get("/jobs", async (c) => {
    const jobs = c.var.jobs;
    const filter = { job: q(c.req.query("job")), status: q(c.req.query("status")), cursor: q(c.req.query("cursor")) };
    const csrf = c.var.session.csrf;
    const notice = noticeFor(c.req.query("done"), c.req.query("n"));
    try {
      const page = await jobs.list({ ...filter, status: filter.status as Status | undefined });
      return c.html(<JobsList base={base} csrf={csrf} names={names(c, jobs)} filter={filter} page={page} notice={notice} />);
    } catch (error) {
      return c.html(<JobsList base={base} csrf={csrf} names={names(c, jobs)} filter={filter} page={undefined} error={userError(error)} />, 400);
    }
  });

  app.get("/jobs/:id", async (c) => {
    const id = c.req.param("id");
    // A live poll swaps in the job's state only: the payload (up to its limit, 1 MB a poll) is left out of it.
    const live = c.req.header("x-pgtick-live") !== undefined;
    const job = await c.var.jobs.get(id, { payload: !live });
    const csrf = c.var.session.csrf;
    if (!job) return c.html(<JobNotFound base={base} csrf={csrf} id={id} />, 404);
    return c.html(<JobDetail base={base} csrf={csrf} job={job} live={live} notice={noticeFor(c.req.query("done"), undefined)} />);
  });

  /** Cancel and run now answer on the job's page when they cannot act: gone (404), or running (409). */
  const act = (path: "cancel" | "run", kicks: (jobs: AnyJobs, id: string) => Promise<boolean>) =>
    app.post(`/jobs/:id/${path}`, async (c) => {
      const id = c.req.param("id");
      try {
        // A delayed job made due now is kicked like any enqueue, so it starts without waiting for the cron.
        if (await kicks(c.var.jobs, id)) await enqueued(deps, c, [id]);
        return c.redirect(path === "cancel" ? `${base}/jobs?done=cancelled&n=1` : `${base}/jobs/${id}?done=ran-now`, 303);
      } catch (e) {
        if (!isJobsError(e)) throw e;
      }
      const job = await c.var.jobs.get(id);
      const csrf = c.var.session.csrf;
      // Cancelled already (a double click, a retried form): what the first click showed.
      if (path === "cancel" && job?.status === "cancelled") return c.redirect(`${base}/jobs?done=cancelled&n=1`, 303);
      if (!job) return c.html(<JobNotFound base={base} csrf={csrf} id={id} />, 404);
      const verb = path === "cancel" ? "cancelled" : "run again";
      // Refused and still here: running, or it finished meanwhile (only its history has it).
      const running = job.status === "running";
      const alert = running
        ? `A tick is running this job now, so it cannot be ${verb}. Nothing was changed.`
        : `This job has finished (${job.status}), so it cannot be ${verb}. Nothing was changed.`;
      return c.html(<JobDetail base={base} csrf={csrf} job={job} alert={alert} />, running ? 409 : 404);
    });
  act("cancel", (jobs, id) => jobs.cancel(id).then(() => false));
  act("run", (jobs, id) => jobs.run(id).then((r) => r.moved));
};
