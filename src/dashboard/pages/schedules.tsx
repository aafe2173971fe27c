/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { Context } from "hono";
import type { FC } from "hono/jsx";
import { isJobsError } from "../../errors.js";
import type { MissedPolicy } from "../../schedules/define.js";
import type { ScheduleInfo, SchedulesApi } from "../../schedules/runtime.js";
import type { Page as ListPage } from "../../store/shared/paging.js";
import type { DashboardEnv } from "../dashboard-app.js";
import { enqueued, formText, q, qs, type Routes } from "../dashboard-context.js";
import { pretty, Time, utc } from "../format.js";
import { Csrf, Live, Page } from "../layout.js";
import { Kv, Pager } from "../parts.js";
import { noticeFor } from "../notices.js";

const NEXT_RUNS = 3;

/** One formatter per zone: building one per occurrence shown cost 217 ms of a page of 1,000 schedules. */
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The occurrence as the schedule's own zone reads it (Intl works the same on Node, Edge and workerd). */
const inZone = (iso: string, timeZone: string): string => {
  let f = formatters.get(timeZone);
  if (!f) formatters.set(timeZone, (f = new Intl.DateTimeFormat("en-GB", { timeZone, dateStyle: "medium", timeStyle: "short" })));
  return `${f.format(new Date(iso))} ${timeZone}`;
};

/**
 * A next run: when, and in the schedule's zone. One whose time has come is enqueued by the next tick
 * (the platform's cron starts one a minute): "8 s ago" read as a run that had happened.
 */
const NextRun: FC<{ iso: string; timezone: string; now: number }> = ({ iso, timezone, now }) => (
  <li>
    {Date.parse(iso) <= now ? (
      <time datetime={iso} title={iso}>
        {utc(iso)} <span class="muted">(due: the next tick enqueues it)</span>
      </time>
    ) : (
      <Time iso={iso} now={now} />
    )}{" "}
    <span class="muted">· {inZone(iso, timezone)}</span>
  </li>
);

const missedText = (m: MissedPolicy): string =>
  m === "skip" ? "skip missed runs" : m === "latest" ? "run the latest missed once" : `catch up the last ${m.catchUp}`;

type SchedulesProps = { base: string; csrf: string; page: ListPage<ScheduleInfo> | undefined; cursor?: string; notice?: string; alert?: string };

const Schedules: FC<SchedulesProps> = ({ base, csrf, page, cursor, notice, alert }) => {
  const link = (at?: string) => `${base}/schedules${qs({ cursor: at })}`;
  // An action comes back to the page it was taken on.
  const act = (s: ScheduleInfo, verb: string) => `${base}/schedules/${encodeURIComponent(s.name)}/${verb}${qs({ cursor })}`;
  const schedules = page?.items ?? [];
  const now = Date.now();
  return (
  <Page title="Schedules" base={base} section="schedules" csrf={csrf} notice={notice} alert={alert} canonical={link(cursor)}>
    <Live id="schedules">
      {!page ? null : schedules.length === 0 ? (
        <p class="muted">{cursor ? "No schedules on this page." : "This deployment defines no schedules (pass `schedules` to createJobs)."}</p>
      ) : (
        schedules.map((s) => (
          <section class="card" aria-labelledby={`s-${s.name}`} id={`schedule-${s.name}`}>
            <h2 id={`s-${s.name}`}>
              {s.name} {s.paused ? <span class="badge paused">paused</span> : null}
            </h2>
            <p>{s.description}</p>
            <Kv
              rows={[
                ["Cron", <><code>{s.cron}</code> in {s.timezone}</>],
                ["Job", <a href={`${base}/jobs?job=${encodeURIComponent(s.job)}`}>{s.job}</a>],
                [
                  "Next runs",
                  s.nextRuns.length === 0 ? (
                    <span class="muted">none while paused</span>
                  ) : (
                    <ol class="next-runs">
                      {s.nextRuns.map((r) => (
                        <NextRun iso={r} timezone={s.timezone} now={now} />
                      ))}
                    </ol>
                  ),
                ],
                ["Last enqueued", <><Time iso={s.lastEnqueuedAt} />{s.lastJobId ? <> <a href={`${base}/jobs/${s.lastJobId}`}>job</a></> : null}</>],
                ["Missed runs", missedText(s.missed)],
                ["Payload", <pre>{pretty(s.payload)}</pre>],
              ]}
            />
            <div class="actions">
              <form method="post" action={act(s, s.paused ? "resume" : "pause")} class="inline">
                <Csrf token={csrf} />
                <button type="submit" aria-label={`${s.paused ? "Resume" : "Pause"} ${s.name}`}>
                  {s.paused ? "Resume" : "Pause"}
                </button>
              </form>
              <form method="post" action={act(s, "run")} class="inline">
                <Csrf token={csrf} />
                {/* A run after the last job the page shows: a double click (or a second tab) queues it once. Not a token made
                    per render: this part of the page refreshes, and one changing at every refresh was swapped in every 3 s. */}
                <input type="hidden" name="after" value={s.lastJobId ?? "none"} />
                <button type="submit" class="primary" aria-label={`Run now: ${s.name}`}>
                  Run now
                </button>
              </form>
            </div>
          </section>
        ))
      )}
      <Pager link={link} cursor={cursor} next={page?.nextCursor} />
    </Live>
  </Page>
  );
};

export const schedulePages: Routes = (app, deps) => {
  const { base } = deps;
  app.get("/schedules", async (c) => {
    const cursor = q(c.req.query("cursor"));
    const props = { base, csrf: c.var.session.csrf, cursor };
    try {
      const page = await c.var.jobs.schedules.list({ next: NEXT_RUNS, cursor });
      return c.html(<Schedules {...props} page={page} notice={noticeFor(c.req.query("done"))} />);
    } catch (e) {
      if (!isJobsError(e)) throw e;
      return c.html(<Schedules {...props} page={undefined} alert={e.message} />, 400);
    }
  });

  const act = (path: string, done: string, run: (name: string, api: SchedulesApi, c: Context<DashboardEnv>) => Promise<unknown>) =>
    app.post(`/schedules/:name/${path}`, async (c) => {
      const api = c.var.jobs.schedules;
      const cursor = q(c.req.query("cursor"));
      try {
        const result = await run(c.req.param("name"), api, c);
        if (path === "run" && !(result as { deduplicated?: boolean }).deduplicated) await enqueued(deps, c, [(result as { id: string }).id]);
        return c.redirect(`${base}/schedules${qs({ done, cursor })}#schedule-${encodeURIComponent(c.req.param("name"))}`, 303);
      } catch (e) {
        if (!isJobsError(e)) throw e;
        // A cursor this page did not make: the first page, whose links carry none.
        const shown = await api.list({ next: NEXT_RUNS, cursor }).then((page) => ({ page, cursor }), async () => ({ page: await api.list({ next: NEXT_RUNS }), cursor: undefined }));
        return c.html(<Schedules base={base} csrf={c.var.session.csrf} {...shown} alert={e.message} />, e.code === "not_found" ? 404 : 400);
      }
    });
  act("pause", "paused", (name, api) => api.pause(name));
  act("resume", "resumed", (name, api) => api.resume(name));
  act("run", "ran", async (name, api, c) => {
    const after = formText(c.var.form.after);
    const key = after && /^([0-9a-f-]{36}|none)$/.test(after) ? `dashboard:schedule-run:${name}:${after}` : undefined;
    // While its job is queued or running the key dedupes; once it has run, its run in the history holds the key.
    const before = key ? (await c.var.jobs.runs.list({ idempotencyKey: key, limit: 1 })).items[0] : undefined;
    return before ? { id: before.jobId, deduplicated: true } : api.run(name, key ? { idempotencyKey: key } : {});
  });
};
