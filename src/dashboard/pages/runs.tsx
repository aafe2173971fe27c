/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { parseIsoTime } from "../../iso-time.js";
import type { FC } from "hono/jsx";
import type { Page as Paged } from "../../store/shared/paging.js";
import { RUN_OUTCOMES, type RunSummary, type RunView } from "../../store/runs/run-views.js";
import { qs } from "../dashboard-context.js";
import { dur, FilterSelect, firstLine, pretty, Time } from "../format.js";
import { Csrf, Live, Page } from "../layout.js";
import { Kv, Pager, Table } from "../parts.js";

/** The runs search, as the query string carries it. */
export interface RunFilter {
  job?: string;
  outcome?: string;
  correlationId?: string;
  idempotencyKey?: string;
  jobId?: string;
  since?: string;
  until?: string;
  cursor?: string;
}

const took = (ms: number | null) => (ms === null ? "—" : dur(ms));
const Outcome: FC<{ o: string }> = ({ o }) => <span class={`badge ${o}`}>{o.replace("_", "-")}</span>;

/** A job's attempts, oldest first: what each ended as, when, how long it took, and its error. */
export const Timeline: FC<{ base: string; runs: readonly RunSummary[]; current?: string }> = ({ base, runs, current }) => (
  <ol class="tl" id="attempts">
    {runs.map((r) => (
      <li aria-current={r.id === current ? "step" : undefined}>
        <a href={`${base}/runs/${r.id}`}>Attempt {r.attempt}</a> <Outcome o={r.outcome} /> <Time iso={r.finishedAt} /> · {took(r.durationMs)}
        {r.error ? <div class="err clip">{firstLine(r.error)}</div> : null}
      </li>
    ))}
  </ol>
);

/**
 * A time filter as a datetime-local field takes it: UTC, to the second. One given with an offset or as a
 * date (a bookmark, a link) showed an empty field, and the next search dropped it.
 */
const fieldTime = (value: string | undefined): string | undefined => {
  if (!value) return value;
  const ms = parseIsoTime(value.includes("T") && !/(Z|[+-]\d\d:?\d\d)$/i.test(value) ? `${value}Z` : value) ?? (/^\d{4}-\d\d-\d\d$/.test(value) ? Date.parse(value) : undefined);
  return ms === undefined || Number.isNaN(ms) ? value : new Date(ms).toISOString().slice(0, 19);
};

const Text: FC<{ name: keyof RunFilter; label: string; value?: string; type?: string }> = ({ name, label, value, type }) => (
  <div>
    <label for={`f-${name}`}>{label}</label>
    {type ? <input id={`f-${name}`} name={name} type={type} step="1" value={fieldTime(value)} /> : <input id={`f-${name}`} name={name} type="text" value={value} />}
  </div>
);

export const RunsList: FC<{ base: string; csrf: string; names: string[]; filter: RunFilter; page?: Paged<RunSummary>; error?: string }> = ({
  base,
  csrf,
  names,
  filter,
  page,
  error,
}) => (
  <Page title="Runs" base={base} section="runs" csrf={csrf} alert={error}>
    <form class="filters" method="get" action={`${base}/runs`} role="search" aria-label="Search runs">
      <FilterSelect id="f-job" name="job" label="Job" any="All jobs" values={names} selected={filter.job} />
      <FilterSelect id="f-outcome" name="outcome" label="Outcome" any="Any outcome" values={RUN_OUTCOMES} selected={filter.outcome} />
      <Text name="correlationId" label="Correlation id" value={filter.correlationId} />
      <Text name="idempotencyKey" label="Idempotency key" value={filter.idempotencyKey} />
      <Text name="jobId" label="Job id" value={filter.jobId} />
      <Text name="since" label="Finished from (UTC)" value={filter.since} type="datetime-local" />
      <Text name="until" label="Finished before (UTC)" value={filter.until} type="datetime-local" />
      <button type="submit">Search</button>
    </form>
    <Live id="runs-list">
      {page && page.items.length === 0 ? <p class="muted">{page.nextCursor ? "None on this page; older runs may match (Next)." : "No runs match."}</p> : null}
      {page && page.items.length > 0 ? (
        <Table
          caption="Runs, newest first"
          cols={[{ l: "Run" }, { l: "Outcome" }, { l: "Finished" }, { l: "Took", c: "num" }, { l: "Error", c: "clip err" }]}
          rows={page.items.map((r) => [
            <>
              <a href={`${base}/runs/${r.id}`}>{r.job}</a> <span class="muted">attempt {r.attempt}</span>
            </>,
            <Outcome o={r.outcome} />,
            <Time iso={r.finishedAt} />,
            took(r.durationMs),
            firstLine(r.error),
          ])}
        />
      ) : null}
      <Pager link={(cursor) => `${base}/runs${qs({ ...filter, cursor })}`} cursor={filter.cursor} next={page?.nextCursor} />
    </Live>
  </Page>
);

/** One run: what it did (error and stack, output, its ctx.log lines), the job's other attempts, and Run again. */
export const RunDetail: FC<{ base: string; csrf: string; run: RunView; attempts: readonly RunSummary[]; alert?: string }> = ({ base, csrf, run, attempts, alert }) => (
  <Page title={`Run of ${run.job}`} base={base} section="runs" csrf={csrf} alert={alert}>
    <Kv
      id="run"
      rows={[
        ["Outcome", <><Outcome o={run.outcome} /> attempt {run.attempt}{run.maxAttempts === null ? "" : ` of ${run.maxAttempts}`}</>],
        ["Job", <><a href={`${base}/jobs/${run.jobId}`}>{run.job}</a> <code class="muted">{run.jobId}</code></>],
        ["Started", <Time iso={run.startedAt} />],
        ["Finished", <><Time iso={run.finishedAt} /> <span class="muted">· took {took(run.durationMs)}</span></>],
        ["Enqueued", <Time iso={run.createdAt} />],
        ["Correlation id", run.correlationId ? <a href={`${base}/runs${qs({ correlationId: run.correlationId })}`}>{run.correlationId}</a> : <span class="muted">none</span>],
        ["Idempotency key", run.idempotencyKey ?? <span class="muted">none</span>],
      ]}
    />
    <form method="post" action={`${base}/runs/${run.id}/rerun`} class="actions">
      <Csrf token={csrf} />
      {/* One form, one job: a double click (or a second tab posting this same form) queues it once. */}
      <input type="hidden" name="once" value={crypto.randomUUID()} />
      <button type="submit" class="primary">
        Run again
      </button>
      <span class="muted">A new job with this run's payload.</span>
    </form>
    <h2>Attempts</h2>
    <Timeline base={base} runs={attempts} current={run.id} />
    {run.error ? (
      <>
        <h2>Error</h2>
        <pre class="err" id="run-error">
          {run.error}
        </pre>
        {run.stack ? (
          <details open>
            <summary>Stack</summary>
            <pre id="run-stack">{run.stack}</pre>
          </details>
        ) : null}
      </>
    ) : null}
    <h2>Output</h2>
    {run.output == null ? <p class="muted">{run.outputTruncated ? "Too large to keep." : "None."}</p> : <pre id="output">{pretty(run.output)}</pre>}
    <h2>Log</h2>
    {run.logs.length === 0 ? (
      <p class="muted">No ctx.log lines.</p>
    ) : (
      <ol class="log" id="logs">
        {run.logs.map((l) => (
          <li>
            <code>{l.at.slice(11, 23)}</code> <span class={`lv ${l.level}`}>{l.level}</span> {l.msg}
            {l.fields ? <code class="muted"> {JSON.stringify(l.fields)}</code> : null}
          </li>
        ))}
      </ol>
    )}
  </Page>
);
