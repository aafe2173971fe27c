/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { WaitingOn } from "../../flow/waiting.js";
import type { JobView } from "../../store/admin/views.js";
import { dur, pretty, span, Time } from "../format.js";
import { Csrf, Live, Page } from "../layout.js";
import { Kv } from "../parts.js";
import { Timeline } from "./runs.js";

/** Whether a job's run-at is still ahead (a delayed job, or one backing off or debounced). */
const isDelayed = (runAt: string | null, now: number): boolean => runAt !== null && Date.parse(runAt) > now;

const keyText = (key: string) => (key === "" ? "(no key)" : `"${key}"`);

/** Which flow-control limit holds a due job back, in words. */
const waitingText = (w: WaitingOn): string =>
  w.kind === "concurrency"
    ? `its concurrency limit: ${w.running} of ${w.limit} running for key ${keyText(w.key)}`
    : `its rate limit${w.group ? ` (group ${w.group})` : ""}: ${w.starts} of ${w.limit} starts per ${dur(w.periodMs)} for key ${keyText(w.key)}`;

const none = <span class="muted">none</span>;

/**
 * The part of a job's page that changes as it runs (refreshed in place): its facts with, by
 * status, when it runs and what it waits on, when it started, how long it has run and its
 * lease, or how it ended; its output, attempts, last error, and actions.
 */
const JobState: FC<{ base: string; csrf: string; job: JobView }> = ({ base, csrf, job }) => {
  const now = Date.now();
  const queued = job.status === "queued";
  const running = job.status === "running";
  const delayed = queued && isDelayed(job.runAt, now);
  return (
    <Live id="job">
      <Kv
        rows={[
          ["Id", <code>{job.id}</code>],
          [
            "Status",
            <>
              <span class={`badge ${job.status}`} id="job-status">
                {job.status}
              </span>
              {job.status === "dead" ? <a href={`${base}/dead-letters/${job.id}`}> Open the dead letter</a> : null}
            </>,
          ],
          queued && ["Run at", <><Time iso={job.runAt} now={now} />{delayed ? <span class="muted"> · delayed</span> : null}</>],
          queued && job.waitingOn && ["Waiting on", <span id="waiting-on">{waitingText(job.waitingOn)}</span>],
          running && ["Started", <Time iso={job.updatedAt} now={now} />],
          running && ["Running for", <span id="elapsed">{span(now - Date.parse(job.updatedAt))}</span>],
          running && ["Lease expires", <Time iso={job.leaseExpiresAt} now={now} />],
          job.status === "succeeded" && ["Finished", <Time iso={job.finishedAt} now={now} />],
          job.status === "cancelled" && ["Cancelled", <Time iso={job.finishedAt} now={now} />],
          !!job.deadAt && ["Died", <><Time iso={job.deadAt} now={now} /> <span class="muted">· {job.reason}</span></>],
          ["Attempts", job.maxAttempts === null ? job.attempt : `${job.attempt} of ${job.maxAttempts}`],
          ["Replays", job.replays],
          ["Priority", job.priority ?? "—"],
          ["Created", <Time iso={job.createdAt} now={now} />],
          ["Idempotency key", job.idempotencyKey ?? none],
          ["Correlation id", job.correlationId ?? none],
        ]}
      />
      {job.status === "succeeded" ? (
        <>
          <h2>Output</h2>
          {job.output == null ? <p class="muted">{job.outputTruncated ? "Too large to keep." : "None."}</p> : <pre id="output">{pretty(job.output)}</pre>}
        </>
      ) : null}
      {job.attempts && job.attempts.length > 0 ? (
        <>
          <h2>Attempts</h2>
          <Timeline base={base} runs={job.attempts} />
        </>
      ) : null}
      <h2>Last error</h2>
      {job.lastError ? <pre class="err" id="last-error">{job.lastError}</pre> : <p class="muted">None.</p>}
      {job.status === "queued" ? (
        <div class="actions">
          {delayed ? (
            <form method="post" action={`${base}/jobs/${job.id}/run`} class="inline">
              <Csrf token={csrf} />
              <button type="submit" class="primary">
                Run now
              </button>
            </form>
          ) : null}
          <form method="post" action={`${base}/jobs/${job.id}/cancel`} class="inline">
            <Csrf token={csrf} />
            <button type="submit" class="danger">
              Cancel this job
            </button>
          </form>
        </div>
      ) : null}
    </Live>
  );
};

/** A job no view has: cancelled, older than the history keeps, or never there. Live, so a page left open says when it goes. */
const JobGone: FC<{ id: string }> = ({ id }) => (
  <Live id="job">
    <p id="gone">
      This job is not in the queue: it was cancelled, finished longer ago than the run history keeps, or never existed.
    </p>
    <p class="muted">
      Id <code>{id}</code>
    </p>
  </Live>
);

/** `live`: the answer to a poll, which keeps the payload the page loaded with (a debounce or an edited replay shows on reload). */
export const JobDetail: FC<{ base: string; csrf: string; job: JobView; live?: boolean; notice?: string; alert?: string }> = ({ base, csrf, job, live, notice, alert }) => (
  <Page title={`Job ${job.job}`} base={base} section="jobs" csrf={csrf} notice={notice} alert={alert} canonical={`${base}/jobs/${encodeURIComponent(job.id)}`}>
    <JobState base={base} csrf={csrf} job={job} />
    {live ? null : (
      <>
        <h2>Payload</h2>
        <pre id="payload">{pretty(job.payload)}</pre>
      </>
    )}
  </Page>
);

export const JobNotFound: FC<{ base: string; csrf: string; id: string }> = ({ base, csrf, id }) => (
  <Page title="Job" base={base} section="jobs" csrf={csrf} canonical={`${base}/jobs/${encodeURIComponent(id)}`}>
    <JobGone id={id} />
    <p>
      <a href={`${base}/jobs`}>Back to the list</a>
    </p>
  </Page>
);
