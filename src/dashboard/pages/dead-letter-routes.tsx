/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { isJobsError } from "../../errors.js";
import { inexactIntegerProblem } from "../../json-limits.js";
import { MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import type { DashboardContext } from "../dashboard-app.js";
import { enqueued, formList, names, formText, q, qs, type Routes, userError } from "../dashboard-context.js";
import { noticeFor } from "../notices.js";
import { DeadDetail, DeadList, type Filter, type Issue, NotFound } from "./dead-letters.js";

/** The dead letter pages' routes: the list and detail views, replay (one, edited, selected, all matching) and discard. */
const issuesOf = (error: unknown): Issue[] => {
  if (!isJobsError(error)) throw error;
  const details = error.details as { issues?: Issue[] } | undefined;
  return details?.issues?.length ? details.issues : [{ path: [], message: error.message }];
};

/** Calls one "replay all matching" click makes at most, each reading up to 10,000 letters. */
const CALLS_PER_CLICK = 10;

/** Back to the list as it was filtered and paged (the forms carry it), saying what was done. */
const doneUrl = (c: DashboardContext, base: string, what: "replayed" | "discarded", n: number, skipped = 0, left = 0) => {
  const at = (k: string) => q(c.req.query(k));
  return `${base}/dead-letters${qs({ job: at("job"), reason: at("reason"), cursor: at("cursor"), done: what, n, skipped: skipped || undefined, left: left || undefined })}`;
};


export const deadLetterPages: Routes = (app, deps) => {
  const { base } = deps;

  const list = async (c: DashboardContext, error?: string) => {
    const jobs = c.var.jobs;
    const filter: Filter = { job: q(c.req.query("job")), reason: q(c.req.query("reason")), cursor: q(c.req.query("cursor")) };
    const csrf = c.var.session.csrf;
    try {
      const page = await jobs.deadLetters.list(filter);
      const notice = noticeFor(c.req.query("done"), c.req.query("n"), c.req.query("skipped"), c.req.query("left"));
      return c.html(<DeadList base={base} csrf={csrf} names={names(c, jobs)} filter={filter} page={page} notice={notice} error={error} />, error ? 400 : 200);
    } catch (e) {
      return c.html(<DeadList base={base} csrf={csrf} names={names(c, jobs)} filter={filter} page={undefined} error={userError(e)} />, 400);
    }
  };

  app.get("/dead-letters", (c) => list(c));

  app.get("/dead-letters/:id", async (c) => {
    const jobs = c.var.jobs;
    const dead = await jobs.deadLetters.get(c.req.param("id"));
    const csrf = c.var.session.csrf;
    if (!dead) return c.html(<NotFound base={base} csrf={csrf} />, 404);
    return c.html(<DeadDetail base={base} csrf={csrf} dead={dead} known={jobs.registry.has(dead.job)} />);
  });

  // Replay one, as it was or (with a `payload` field) edited and checked against the job's schema first.
  app.post("/dead-letters/:id/replay", async (c) => {
    const jobs = c.var.jobs;
    const id = c.req.param("id");
    const csrf = c.var.session.csrf;
    const text = formText(c.var.form.payload);
    // The letter as the page showed it: a second click finds it replayed, even where the job failed again at once.
    const seen = formText(c.var.form.replays);
    const replays = seen !== undefined && /^\d{1,9}$/.test(seen) ? { replays: Number(seen) } : {};
    if (text === undefined) {
      try {
        await enqueued(deps, c, [(await jobs.deadLetters.replay(id, replays)).id]);
        return c.redirect(doneUrl(c, base, "replayed", 1), 303);
      } catch (e) {
        // Already replayed (a double click, another operator): the job is queued once, and the page says so.
        if (isJobsError(e) && e.code === "not_found") return c.redirect(doneUrl(c, base, "replayed", 0, 1), 303);
        return list(c, userError(e));
      }
    }
    const dead = await jobs.deadLetters.get(id);
    // Replayed or discarded meanwhile (another operator): said as the plain replay says it.
    if (!dead) return c.redirect(doneUrl(c, base, "replayed", 0, 1), 303);
    const again = (issues: Issue[], alert?: string) =>
      c.html(<DeadDetail base={base} csrf={csrf} dead={dead} known={jobs.registry.has(dead.job)} edited={text} issues={issues} alert={alert} />, 422);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch (e) {
      return again([{ path: [], message: `not valid JSON (${(e as Error).message})` }], "The payload was not replayed: fix the errors below.");
    }
    // As the HTTP API refuses it: replayed, a 64-bit id would have been stored rounded.
    const inexact = inexactIntegerProblem(text);
    if (inexact !== undefined) return again([{ path: [], message: inexact }], "The payload was not replayed: fix the errors below.");
    try {
      await enqueued(deps, c, [(await jobs.deadLetters.replay(id, { payload, ...replays })).id]);
      return c.redirect(doneUrl(c, base, "replayed", 1), 303);
    } catch (e) {
      if (isJobsError(e) && e.code === "not_found") return c.redirect(doneUrl(c, base, "replayed", 0, 1), 303);
      if (isJobsError(e) && e.code === "conflict") return again([], e.message);
      return again(issuesOf(e), "The payload was not replayed: fix the errors below.");
    }
  });

  app.post("/dead-letters/replay", async (c) => {
    const jobs = c.var.jobs;
    const ids = formList(c.var.form.id);
    if (ids.length === 0) return list(c, "Select at least one dead letter to replay.");
    try {
      const result = await jobs.deadLetters.replayMany({ ids });
      await enqueued(deps, c, result.replayed);
      return c.redirect(doneUrl(c, base, "replayed", result.replayed.length, result.skipped.length), 303);
    } catch (e) {
      return list(c, userError(e));
    }
  });

  app.post("/dead-letters/replay-all", async (c) => {
    const jobs = c.var.jobs;
    const job = q(formText(c.var.form.job));
    const reason = q(formText(c.var.form.reason));
    try {
      // Each call is one statement that selects (oldest first), replays and counts what still matches,
      // reading at most 10,000 letters: a click goes on past letters a live job holds, for up to ten calls.
      const replayed: string[] = [];
      let skipped = 0;
      let left = 0;
      let cursor: string | undefined;
      for (let call = 0; call < CALLS_PER_CLICK && replayed.length < MAX_BULK_REPLAY; call++) {
        let result;
        try {
          result = await jobs.deadLetters.replayMany({ job, reason, limit: MAX_BULK_REPLAY - replayed.length, cursor });
        } catch (e) {
          // What earlier calls replayed stands (each call is a statement of its own): said, and kicked.
          if (replayed.length === 0) throw e;
          skipped++;
          break;
        }
        replayed.push(...result.replayed);
        skipped += result.skipped.length;
        left = result.remaining;
        if (result.nextCursor === null) break;
        cursor = result.nextCursor;
      }
      await enqueued(deps, c, replayed);
      return c.redirect(doneUrl(c, base, "replayed", replayed.length, skipped, left), 303);
    } catch (e) {
      return list(c, userError(e));
    }
  });

  app.post("/dead-letters/discard", async (c) => {
    const jobs = c.var.jobs;
    const ids = formList(c.var.form.id);
    if (ids.length === 0) return list(c, "Select at least one dead letter to discard.");
    const { discarded } = await jobs.deadLetters.discardMany(ids.slice(0, MAX_BULK_REPLAY));
    return c.redirect(doneUrl(c, base, "discarded", discarded.length), 303);
  });
};
