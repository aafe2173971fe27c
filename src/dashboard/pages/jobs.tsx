import type { FC } from "hono/jsx";
import type { JobSummary, JobView } from "../../store/admin/views.js";
import { isJobsError } from "../../errors.js";
import type { Page as Paged } from "../../store/shared/paging.js";
import { names, q, qs, type Routes, userError } from "../dashboard-context.js";
import { FilterSelect, firstLine, pretty, Time } from "../format.js";
import { Csrf, Page } from "../layout.js";
import { PayloadCell } from "../payload-preview.js";
import { noticeFor } from "../notices.js";

const STATUSES = ["queued", "running"] as const;
type Status = (typeof STATUSES)[number];

interface ListProps {
  base: string;
  csrf: string;
  names: string[];
  filter: { job?: string; status?: string; cursor?: string };
  page: Paged<JobSummary> | undefined;
  error?: string;
  notice?: string;
}

const JobsList: FC<ListProps> = ({ base, csrf, names, filter, page, error, notice }) => (
  <Page title="Jobs" base={base} section="jobs" csrf={csrf} notice={notice} alert={error}>
    <form class="filters" method="get" action={`${base}/jobs`} role="search" aria-label="Filter jobs">
      <FilterSelect id="f-job" name="job" label="Job" any="All jobs" values={names} selected={filter.job} />
      <FilterSelect id="f-status" name="status" label="Status" any="Queued or running" values={STATUSES} selected={filter.status} />
      <button type="submit">Filter</button>
    </form>
    {page ? (
      page.items.length === 0 ? (
        <p class="muted">No jobs {filter.cursor ? "on this page" : "match"}: finished jobs leave the queue.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="skip">Jobs in the queue, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">Status</th>
                <th scope="col">Run at</th>
                <th scope="col" class="num">Attempt</th>
                <th scope="col" class="num hide-sm">Priority</th>
                <th scope="col" class="hide-sm">Payload</th>
                <th scope="col" class="hide-sm">Last error</th>
              </tr>
            </thead>
            <tbody>
              {page.items.map((j) => (
                <tr>
                  <td>
                    <a href={`${base}/jobs/${j.id}`}>{j.job}</a>
                    <div class="muted">
                      <code>{j.id.slice(0, 8)}</code>
                    </div>
                  </td>
                  <td>
                    <span class={`badge ${j.status}`}>{j.status}</span>
                  </td>
                  <td>
                    <Time iso={j.runAt} />
                  </td>
                  <td class="num">
                    {j.attempt}/{j.maxAttempts}
                  </td>
                  <td class="num hide-sm">{j.priority}</td>
                  <td class="hide-sm clip">
                    <PayloadCell row={j} />
                  </td>
                  <td class="hide-sm clip err">{firstLine(j.lastError)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )
    ) : null}
    <nav class="pager" aria-label="Pages">
      {filter.cursor ? <a href={`${base}/jobs${qs({ job: filter.job, status: filter.status })}`}>First page</a> : null}
      {page?.nextCursor ? (
        <a href={`${base}/jobs${qs({ job: filter.job, status: filter.status, cursor: page.nextCursor })}`} rel="next">
          Next page
        </a>
      ) : null}
    </nav>
  </Page>
);

const JobDetail: FC<{ base: string; csrf: string; job: JobView; notice?: string; alert?: string }> = ({ base, csrf, job, notice, alert }) => (
  <Page title={`Job ${job.job}`} base={base} section="jobs" csrf={csrf} notice={notice} alert={alert}>
    <dl class="kv">
      <dt>Id</dt>
      <dd>
        <code>{job.id}</code>
      </dd>
      <dt>Job</dt>
      <dd>{job.job}</dd>
      <dt>Status</dt>
      <dd>
        <span class={`badge ${job.status}`}>{job.status}</span>
        {job.status === "dead" ? (
          <>
            {" "}
            <a href={`${base}/dead-letters/${job.id}`}>Open the dead letter</a>
          </>
        ) : null}
      </dd>
      <dt>Run at</dt>
      <dd>
        <Time iso={job.runAt} />
      </dd>
      <dt>Attempts</dt>
      <dd>
        {job.attempt} of {job.maxAttempts}
      </dd>
      <dt>Priority</dt>
      <dd>{job.priority}</dd>
      <dt>Created</dt>
      <dd>
        <Time iso={job.createdAt} />
      </dd>
      {job.leaseExpiresAt ? (
        <>
          <dt>Lease expires</dt>
          <dd>
            <Time iso={job.leaseExpiresAt} />
          </dd>
        </>
      ) : null}
      <dt>Idempotency key</dt>
      <dd>{job.idempotencyKey ?? <span class="muted">none</span>}</dd>
      <dt>Correlation id</dt>
      <dd>{job.correlationId ?? <span class="muted">none</span>}</dd>
    </dl>
    <h2>Payload</h2>
    <pre id="payload">{pretty(job.payload)}</pre>
    <h2>Last error</h2>
    {job.lastError ? <pre class="err" id="last-error">{job.lastError}</pre> : <p class="muted">None.</p>}
    {job.status === "queued" ? (
      <form method="post" action={`${base}/jobs/${job.id}/cancel`} class="actions">
        <Csrf token={csrf} />
        <button type="submit" class="danger">
          Cancel this job
        </button>
      </form>
    ) : null}
  </Page>
);

const NotFound: FC<{ base: string; csrf: string; what: string; back: string }> = ({ base, csrf, what, back }) => (
  <Page title="Not found" base={base} section="jobs" csrf={csrf}>
    <p>{what}</p>
    <p>
      <a href={back}>Back to the list</a>
    </p>
  </Page>
);

export const jobPages: Routes = (app, { base }) => {

  app.get("/jobs", async (c) => {
    const jobs = c.var.jobs;
    const filter = { job: q(c.req.query("job")), status: q(c.req.query("status")), cursor: q(c.req.query("cursor")) };
    const csrf = c.var.session.csrf;
    const notice = noticeFor(c.req.query("done"), c.req.query("n"));
    try {
      const page = await jobs.list({ ...filter, status: filter.status as Status | undefined });
      return c.html(<JobsList base={base} csrf={csrf} names={names(jobs)} filter={filter} page={page} notice={notice} />);
    } catch (error) {
      return c.html(<JobsList base={base} csrf={csrf} names={names(jobs)} filter={filter} page={undefined} error={userError(error)} />, 400);
    }
  });

  app.get("/jobs/:id", async (c) => {
    const jobs = c.var.jobs;
    const job = await jobs.get(c.req.param("id"));
    const csrf = c.var.session.csrf;
    if (!job) {
      return c.html(
        <NotFound base={base} csrf={csrf} what="This job is not in the queue: it finished, was cancelled, or never existed." back={`${base}/jobs`} />,
        404,
      );
    }
    return c.html(<JobDetail base={base} csrf={csrf} job={job} notice={noticeFor(c.req.query("done"), undefined)} />);
  });

  app.post("/jobs/:id/cancel", async (c) => {
    const jobs = c.var.jobs;
    const id = c.req.param("id");
    try {
      await jobs.cancel(id);
      return c.redirect(`${base}/jobs?done=cancelled&n=1`, 303);
    } catch (e) {
      if (!isJobsError(e)) throw e;
    }
    const job = await jobs.get(id);
    const csrf = c.var.session.csrf;
    if (!job) {
      return c.html(<NotFound base={base} csrf={csrf} what="This job is no longer in the queue: nothing to cancel." back={`${base}/jobs`} />, 404);
    }
    return c.html(<JobDetail base={base} csrf={csrf} job={job} alert="A tick is running this job now, so it cannot be cancelled. Nothing was changed." />, 409);
  });
};
