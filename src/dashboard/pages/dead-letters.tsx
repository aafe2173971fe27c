/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { DeadLetterSummary, DeadLetterView } from "../../store/admin/views.js";
import type { Page as Paged } from "../../store/shared/paging.js";
import { MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import { DEAD_REASONS } from "../../terms.js";
import { qs } from "../dashboard-context.js";
import { FilterSelect, firstLine, pretty, Time } from "../format.js";
import { Csrf, Live, Page } from "../layout.js";
import { Kv, Pager, Table } from "../parts.js";
import { PayloadCell } from "../payload-preview.js";

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
  // The list as filtered: its actions come back to it, and a refused one's page refreshes it, not the whole list.
  const here = qs({ job: filter.job, reason: filter.reason, cursor: filter.cursor });
  return (
    <Page title="Dead letters" base={base} section="dead" csrf={csrf} notice={notice} alert={error} canonical={`${base}/dead-letters${here}`}>
      <form class="filters" method="get" action={`${base}/dead-letters`} role="search" aria-label="Filter dead letters">
        <FilterSelect id="f-job" name="job" label="Job" any="All jobs" values={names} selected={filter.job} />
        <FilterSelect id="f-reason" name="reason" label="Reason" any="Any reason" values={REASONS} selected={filter.reason} />
        <button type="submit">Filter</button>
      </form>
      <Live id="dead-list">
        {page && page.items.length > 0 ? (
          <>
            {/* The checkboxes below belong to this form through their form attribute; each row's own buttons are separate forms. */}
            <form id="selection" method="post" action={`${base}/dead-letters/replay${here}`} class="actions">
              <Csrf token={csrf} />
              <button type="submit" class="primary">
                Replay selected
              </button>
              <button type="submit" class="danger" formaction={`${base}/dead-letters/discard${here}`}>
                Discard selected
              </button>
            </form>
            <Table
              caption="Dead letters, most recent first"
              cols={[{ l: "Select", hide: true }, { l: "Job" }, { l: "Error", c: "clip err" }, { l: "Payload", c: "clip" }, { l: "Attempts", c: "num" }, { l: "Died" }, { l: "Actions", hide: true }]}
              rows={page.items.map((d) => [
                <input type="checkbox" name="id" value={d.id} form="selection" id={`sel-${d.id}`} aria-label={`Select ${d.job} ${d.id.slice(0, 8)}`} />,
                <>
                  <a href={`${base}/dead-letters/${d.id}`}>{d.job}</a>
                  <div class="muted">
                    <code>{d.id.slice(0, 8)}</code> · {d.reason}
                    {d.replays > 0 ? ` · replayed ${d.replays}×` : ""}
                  </div>
                </>,
                firstLine(d.lastError),
                <PayloadCell row={d} />,
                `${d.attempts}/${d.maxAttempts}`,
                <Time iso={d.deadAt} />,
                <form method="post" action={`${base}/dead-letters/${d.id}/replay${here}`} class="inline">
                  <Csrf token={csrf} />
                  <input type="hidden" name="replays" value={String(d.replays)} />
                  <button type="submit" aria-label={`Replay ${d.job} ${d.id.slice(0, 8)}`}>
                    Replay
                  </button>
                </form>,
              ])}
            />
            <form method="post" action={`${base}/dead-letters/replay-all${here}`} class="actions">
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
        <Pager link={(cursor) => `${base}/dead-letters${qs({ job: filter.job, reason: filter.reason, cursor })}`} cursor={filter.cursor} next={page?.nextCursor} />
      </Live>
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
}> = ({ base, csrf, dead, known, edited, issues, alert }) => {
  const text = pretty(dead.payload);
  // A large payload is written out once, in the editor (the page carried it twice: 2 MB for a payload at the limit),
  // unless the editor holds an edit that was refused.
  const once = known && edited === undefined && text.length > SHOWN_TWICE_UP_TO;
  return (
    <Page title={`Dead letter: ${dead.job}`} base={base} section="dead" csrf={csrf} alert={alert} canonical={`${base}/dead-letters/${encodeURIComponent(dead.id)}`}>
      <Kv
        rows={[
          ["Id", <code>{dead.id}</code>],
          ["Job", dead.job],
          ["Reason", dead.reason],
          ["Attempts", `${dead.attempts} of ${dead.maxAttempts}`],
          ["Died", <Time iso={dead.deadAt} />],
          ["Created", <Time iso={dead.createdAt} />],
          ["Replays", <span id="replays">{dead.replays}</span>],
          ["Priority", dead.priority],
          ["Idempotency key", dead.idempotencyKey ?? <span class="muted">none</span>],
          ["Correlation id", dead.correlationId ?? <span class="muted">none</span>],
        ]}
      />
      <h2>Error</h2>
      <pre class="err" id="last-error">
        {dead.lastError ?? "(none recorded)"}
      </pre>
      <h2>Payload</h2>
      {once ? (
        <p class="muted" id="payload">
          {Math.ceil(text.length / 1024).toLocaleString("en-US")} KB: shown once, in the editor below.
        </p>
      ) : (
        <pre id="payload">{text}</pre>
      )}
      <div class="actions">
        <form method="post" action={`${base}/dead-letters/${dead.id}/replay`} class="inline">
          <Csrf token={csrf} />
          <input type="hidden" name="replays" value={String(dead.replays)} />
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
          <input type="hidden" name="replays" value={String(dead.replays)} />
          <div class="field">
            <label for="payload-edit">Payload (JSON), checked against the schema of {dead.job} before anything is queued</label>
            <textarea
              id="payload-edit"
              name="payload"
              spellcheck={false}
              aria-invalid={issues && issues.length > 0 ? "true" : undefined}
              aria-describedby={issues && issues.length > 0 ? "payload-errors" : undefined}
            >
              {edited ?? text}
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
};

/** The payload's text up to which a dead letter's page shows it both above and in the editor. */
const SHOWN_TWICE_UP_TO = 16_384;

export const NotFound: FC<{ base: string; csrf: string }> = ({ base, csrf }) => (
  <Page title="Not found" base={base} section="dead" csrf={csrf}>
    <p>There is no such dead letter: it was replayed, discarded, or never existed.</p>
    <p>
      <a href={`${base}/dead-letters`}>Back to dead letters</a>
    </p>
  </Page>
);

