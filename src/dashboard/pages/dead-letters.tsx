import type { FC } from "hono/jsx";
import { isJobsError } from "../../errors.js";
import type { DeadLetterSummary, DeadLetterView } from "../../store/admin/views.js";
import type { Page as Paged } from "../../store/shared/paging.js";
import { MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import { DEAD_REASONS } from "../../terms.js";
import type { DashboardContext } from "../dashboard-app.js";
import { type AnyJobs, formList, names, formText, q, qs, type Routes, userError } from "../dashboard-context.js";
import { FilterSelect, firstLine, pretty, Time } from "../format.js";
import { Csrf, Page } from "../layout.js";
import { PayloadCell } from "../payload-preview.js";
import { noticeFor } from "../notices.js";

const REASONS = DEAD_REASONS;

export interface Filter {
  job?: string;
  reason?: string;
  cursor?: string;
}

export const DeadList: FC<{
  base: string;
  csrf: string;
  names: string[];
  filter: Filter;
  page: Paged<DeadLetterSummary> | undefined;
  error?: string;
  notice?: string;
}> = ({ base, csrf, names, filter, page, error, notice }) => {
  const described = [filter.job ? `job ${filter.job}` : "", filter.reason ? `reason ${filter.reason}` : ""].filter(Boolean).join(", ");
  return (
    <Page title="Dead letters" base={base} section="dead" csrf={csrf} notice={notice} alert={error}>
      <form class="filters" method="get" action={`${base}/dead-letters`} role="search" aria-label="Filter dead letters">
        <FilterSelect id="f-job" name="job" label="Job" any="All jobs" values={names} selected={filter.job} />
        <FilterSelect id="f-reason" name="reason" label="Reason" any="Any reason" values={REASONS} selected={filter.reason} />
        <button type="submit">Filter</button>
      </form>
      {page && page.items.length > 0 ? (
        <>
          {/* The checkboxes below belong to this form through their form attribute; each row's own buttons are separate forms. */}
          <form id="selection" method="post" action={`${base}/dead-letters/replay`} class="actions">
            <Csrf token={csrf} />
            <button type="submit" class="primary">
              Replay selected
            </button>
            <button type="submit" class="danger" formaction={`${base}/dead-letters/discard`}>
              Discard selected
            </button>
          </form>
          <div class="table-wrap">
            <table>
              <caption class="skip">Dead letters, most recent first</caption>
              <thead>
                <tr>
                  <th scope="col">
                    <span class="skip">Select</span>
                  </th>
                  <th scope="col">Job</th>
                  <th scope="col">Error</th>
                  <th scope="col" class="hide-sm">Payload</th>
                  <th scope="col" class="num">Attempts</th>
                  <th scope="col">Died</th>
                  <th scope="col">
                    <span class="skip">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {page.items.map((d) => (
                  <tr>
                    <td>
                      <input type="checkbox" name="id" value={d.id} form="selection" id={`sel-${d.id}`} aria-label={`Select ${d.job} ${d.id.slice(0, 8)}`} />
                    </td>
                    <td>
                      <a href={`${base}/dead-letters/${d.id}`}>{d.job}</a>
                      <div class="muted">
                        <code>{d.id.slice(0, 8)}</code> · {d.reason}
                      </div>
                    </td>
                    <td class="clip err">{firstLine(d.lastError)}</td>
                    <td class="hide-sm clip">
                      <PayloadCell row={d} />
                    </td>
                    <td class="num">
                      {d.attempts}/{d.maxAttempts}
                    </td>
                    <td>
                      <Time iso={d.deadAt} />
                    </td>
                    <td>
                      <form method="post" action={`${base}/dead-letters/${d.id}/replay`} class="inline">
                        <Csrf token={csrf} />
                        <button type="submit" aria-label={`Replay ${d.job} ${d.id.slice(0, 8)}`}>
                          Replay
                        </button>
                      </form>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <form method="post" action={`${base}/dead-letters/replay-all`} class="actions">
            <Csrf token={csrf} />
            <input type="hidden" name="job" value={filter.job ?? ""} />
            <input type="hidden" name="reason" value={filter.reason ?? ""} />
            <button type="submit">
              {described ? `Replay all matching (${described})` : "Replay all dead letters"}
            </button>
            <span class="muted">At most {MAX_BULK_REPLAY} per click.</span>
          </form>
        </>
      ) : page ? (
        <p class="muted">No dead letters{described ? ` match (${described})` : ""}.</p>
      ) : null}
      <nav class="pager" aria-label="Pages">
        {filter.cursor ? <a href={`${base}/dead-letters${qs({ job: filter.job, reason: filter.reason })}`}>First page</a> : null}
        {page?.nextCursor ? (
          <a href={`${base}/dead-letters${qs({ job: filter.job, reason: filter.reason, cursor: page.nextCursor })}`} rel="next">
            Next page
          </a>
        ) : null}
      </nav>
    </Page>
  );
};

export interface Issue {
  path: Array<string | number>;
  message: string;
}

export const DeadDetail: FC<{
  base: string;
  csrf: string;
  dead: DeadLetterView;
  known: boolean;
  edited?: string;
  issues?: Issue[];
  alert?: string;
}> = ({ base, csrf, dead, known, edited, issues, alert }) => (
  <Page title={`Dead letter: ${dead.job}`} base={base} section="dead" csrf={csrf} alert={alert}>
    <dl class="kv">
      <dt>Id</dt>
      <dd>
        <code>{dead.id}</code>
      </dd>
      <dt>Job</dt>
      <dd>{dead.job}</dd>
      <dt>Reason</dt>
      <dd>{dead.reason}</dd>
      <dt>Attempts</dt>
      <dd>
        {dead.attempts} of {dead.maxAttempts}
      </dd>
      <dt>Died</dt>
      <dd>
        <Time iso={dead.deadAt} />
      </dd>
      <dt>Created</dt>
      <dd>
        <Time iso={dead.createdAt} />
      </dd>
      <dt>Priority</dt>
      <dd>{dead.priority}</dd>
      <dt>Idempotency key</dt>
      <dd>{dead.idempotencyKey ?? <span class="muted">none</span>}</dd>
      <dt>Correlation id</dt>
      <dd>{dead.correlationId ?? <span class="muted">none</span>}</dd>
    </dl>
    <h2>Error</h2>
    <pre class="err" id="last-error">
      {dead.lastError ?? "(none recorded)"}
    </pre>
    <h2>Payload</h2>
    <pre id="payload">{pretty(dead.payload)}</pre>
    <div class="actions">
      <form method="post" action={`${base}/dead-letters/${dead.id}/replay`} class="inline">
        <Csrf token={csrf} />
        <button type="submit" class="primary">
          Replay
        </button>
      </form>
      <form method="post" action={`${base}/dead-letters/discard`} class="inline">
        <Csrf token={csrf} />
        <input type="hidden" name="id" value={dead.id} />
        <button type="submit" class="danger">
          Discard
        </button>
      </form>
    </div>
    <h2 id="edit-heading">Replay with an edited payload</h2>
    {known ? (
      <form method="post" action={`${base}/dead-letters/${dead.id}/replay`} aria-labelledby="edit-heading">
        <Csrf token={csrf} />
        <div class="field">
          <label for="payload-edit">Payload (JSON), checked against the schema of {dead.job} before anything is queued</label>
          <textarea
            id="payload-edit"
            name="payload"
            spellcheck={false}
            aria-invalid={issues && issues.length > 0 ? "true" : undefined}
            aria-describedby={issues && issues.length > 0 ? "payload-errors" : undefined}
          >
            {edited ?? pretty(dead.payload)}
          </textarea>
          {issues && issues.length > 0 ? (
            <ul class="field-error" id="payload-errors">
              {issues.map((i) => (
                <li>
                  {i.path.length > 0 ? <code>{i.path.join(".")}</code> : "payload"}: {i.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
        <div class="actions">
          <button type="submit" class="primary">
            Replay with this payload
          </button>
        </div>
      </form>
    ) : (
      <p class="muted">This deployment has no job named {dead.job}, so an edited payload cannot be checked. Deploy its handler first.</p>
    )}
  </Page>
);

export const NotFound: FC<{ base: string; csrf: string }> = ({ base, csrf }) => (
  <Page title="Not found" base={base} section="dead" csrf={csrf}>
    <p>There is no such dead letter: it was replayed, discarded, or never existed.</p>
    <p>
      <a href={`${base}/dead-letters`}>Back to dead letters</a>
    </p>
  </Page>
);

