/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { JobSummary } from "../../store/admin/views.js";
import type { Page as Paged } from "../../store/shared/paging.js";
import { qs } from "../dashboard-context.js";
import { FilterSelect, firstLine, span, Time } from "../format.js";
import { Live, Page } from "../layout.js";
import { Pager, Table } from "../parts.js";
import { PayloadCell } from "../payload-preview.js";

export const STATUSES = ["queued", "running"] as const;

export interface ListProps {
  base: string;
  csrf: string;
  names: string[];
  filter: { job?: string; status?: string; cursor?: string };
  page: Paged<JobSummary> | undefined;
  error?: string;
  notice?: string;
}

/** When a row runs: a running job since its claim (stamped in `updatedAt`), a queued one at its run-at. */
const When: FC<{ j: JobSummary; now: number }> = ({ j, now }) =>
  j.status === "running" ? (
    <>
      started <Time iso={j.updatedAt} now={now} />
      <div class="muted">running {span(now - Date.parse(j.updatedAt))}</div>
    </>
  ) : (
    <>
      <Time iso={j.runAt} now={now} />
      {Date.parse(j.runAt) > now ? <div class="muted">delayed</div> : null}
    </>
  );

export const JobsList: FC<ListProps> = ({ base, csrf, names, filter, page, error, notice }) => {
  const now = Date.now();
  const link = (cursor?: string) => `${base}/jobs${qs({ job: filter.job, status: filter.status, cursor })}`;
  return (
    <Page title="Jobs" base={base} section="jobs" csrf={csrf} notice={notice} alert={error}>
      <form class="filters" method="get" action={`${base}/jobs`} role="search" aria-label="Filter jobs">
        <FilterSelect id="f-job" name="job" label="Job" any="All jobs" values={names} selected={filter.job} />
        <FilterSelect id="f-status" name="status" label="Status" any="Queued or running" values={STATUSES} selected={filter.status} />
        <button type="submit">Filter</button>
      </form>
      <Live id="jobs-list">
        {page ? (
          page.items.length === 0 ? (
            <p class="muted">No jobs {filter.cursor ? "on this page" : "match"}: finished jobs leave the queue.</p>
          ) : (
            <Table
              caption="Jobs in the queue, newest first"
              cols={[{ l: "Job" }, { l: "Status" }, { l: "When" }, { l: "Attempt", c: "num" }, { l: "Priority", c: "num" }, { l: "Payload", c: "clip" }, { l: "Last error", c: "clip err" }]}
              rows={page.items.map((j) => [
                <>
                  <a href={`${base}/jobs/${j.id}`}>{j.job}</a> <code class="muted">{j.id.slice(0, 8)}</code>
                </>,
                <span class={`badge ${j.status}`}>{j.status}</span>,
                <When j={j} now={now} />,
                `${j.attempt}/${j.maxAttempts}`,
                j.priority,
                <PayloadCell row={j} />,
                firstLine(j.lastError),
              ])}
            />
          )
        ) : null}
        <Pager link={link} cursor={filter.cursor} next={page?.nextCursor} />
      </Live>
    </Page>
  );
};
