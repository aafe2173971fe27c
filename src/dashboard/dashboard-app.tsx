/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { databaseUnavailable } from "../db.js";
import { BodyCut } from "../body-limit.js";
import { LOGIN_FORM_BYTES, readForm, SESSION_FORM_BYTES } from "./form-body.js";
import { drainBound, settleBody } from "../body-drain.js";
import { misconfiguration } from "../errors.js";
import type { Context } from "hono";
import { Hono } from "hono/tiny";
import type { Env } from "../settings/library.js";
import { type DashboardVars, originAllowed, securityHeaders, sessions, STATE_CHANGING, tokenMatches } from "./auth.js";
import { type DashboardAuthOptions, resolveAuth } from "./dashboard-settings.js";
import { Page } from "./layout.js";
import { loginRoutes } from "./login.js";
import { FailedPage, RefusedPage, UnconfiguredPage } from "./pages/public.js";
import { errorText } from "../error-text.js";
import { isJobsError } from "../errors.js";
import { jsonLogger, type Logger } from "../log.js";
import type { AnyJobs } from "./dashboard-context.js";
import { deadLetterPages } from "./pages/dead-letter-routes.js";
import { jobPages } from "./pages/jobs.js";
import { overviewPages } from "./pages/overview.js";
import { runPages } from "./pages/run-routes.js";
import { schedulePages } from "./pages/schedules.js";
import { faviconResponse } from "./favicon.js";
import { liveScript } from "./live.js";
import { logoutSession } from "../admin/login.js";
import { currentSession } from "./current-session.js";
import { sessionId } from "./session.js";
import { CSS } from "./style.js";


export interface DashboardOptions extends DashboardAuthOptions {
  /** The jobs instance, or a per-request getter (edge runtimes make one per request; see createApp). */
  readonly jobs: AnyJobs | ((c: Context) => AnyJobs | Promise<AnyJobs>);
  /** Where DASHBOARD_* settings are read. Default: process.env when it exists. */
  readonly env?: Env | undefined;
  /** The path the dashboard is mounted at, for its links and its cookie. Default `/dashboard`. */
  readonly basePath?: string | undefined;
  /** The clock the login throttle uses instead of the database's now(); for tests of its waits. */
  readonly now?: (() => Date) | undefined;
  /** Called after replays and schedule runs put jobs in the queue (a deployment kicks a tick from here, as for API enqueues). */
  readonly onEnqueued?: ((info: { ids: string[]; dueNow: boolean }, c: Context) => void | Promise<void>) | undefined;
  /** How often open pages refresh their live parts, in ms, while the tab is visible. Default 3000; 0 turns it off. */
  readonly refreshMs?: number | undefined;
  /** Where a page that failed is logged (its stack never reaches the browser). Default: JSON lines on stdout. */
  readonly logger?: Logger | undefined;
}

export type Form = Record<string, string | File | Array<string | File>>;
export type DashboardEnv = { Variables: DashboardVars & { form: Form } };
export type DashboardContext = Context<DashboardEnv>;

const processEnv = (): Env => (typeof process !== "undefined" && process.env ? process.env : {});

/**
 * The dashboard as a Hono app, to mount with `app.route("/dashboard", createDashboard({ jobs }))`.
 * Server-rendered pages and plain forms, with one small script that refreshes their live parts;
 * closed unless DASHBOARD_PASSWORD is set.
 */

export const createDashboard = (options: DashboardOptions): Hono<DashboardEnv> => {
  const base = (options.basePath ?? "/dashboard").replace(/\/+$/, "");
  const env = options.env ?? processEnv();
  const auth = resolveAuth(env, options);
  const app = new Hono<DashboardEnv>();
  const logger = options.logger ?? jsonLogger();
  // A page whose reads failed (the database down or refusing) is an HTML page saying so, never the API's
  // JSON or a bare 500; the live refresh sees a failed answer and marks the page as not up to date.
  app.onError((error, c) => {
    // What a caller got wrong (a bad filter, a page of something gone) is said as such.
    if (isJobsError(error) && error.code !== "invalid_config") {
      return c.html(<FailedPage base={base} title="Not done" message={error.message} />, error.code === "not_found" ? 404 : 400);
    }
    // A form cut off by a client that went away: nobody reads the answer, and nothing failed here.
    if (error instanceof BodyCut) return c.html(<FailedPage base={base} title="Not done" message={error.message} />, 400);
    // An outage at warn, as the API logs it: an open tab refreshes every few seconds while it lasts.
    logger.log(databaseUnavailable(error) ? "warn" : "error", "dashboard page failed", { method: c.req.method, path: c.req.path, error: errorText(error) });
    // Not an outage: saying the database did not answer sent an operator looking in the wrong place.
    const wrong = misconfiguration(error);
    if (wrong !== undefined) {
      return c.html(<FailedPage base={base} title="Misconfigured" message={`The server is misconfigured${wrong || " (a setting)"}, so this page could not be made: see its logs.`} />, 500);
    }
    return c.html(<FailedPage base={base} title="Unavailable" message="The database did not answer, so this page could not be made." />, 503);
  });
  app.use("*", securityHeaders);
  // As the API's (see drain.ts): a refused form's body is read off, or the answer closes the connection, so the
  // next request a client sent on a kept-alive one is not cut off. Without a session, within what a login takes.
  app.use("*", async (c, next) => {
    await next();
    if (!(await settleBody(c.req.raw, drainBound(c.var.session ? SESSION_FORM_BYTES : LOGIN_FORM_BYTES)))) c.header("Connection", "close");
  });
  app.get("/style.css", (c) =>
    c.body(CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=3600" }),
  );
  const live = liveScript(options.refreshMs ?? 3_000);
  app.get("/live.js", (c) => c.body(live, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "public, max-age=3600" }));
  app.get("/favicon.ico", () => faviconResponse());

  if (!auth.configured) {
    app.all("*", (c) => c.html(<UnconfiguredPage base={base} problem={auth.problem} />, 503));
    return app;
  }

  const s = sessions(auth);
  const cookiePath = base || "/";
  const refuse = (c: Context, status: 401 | 403, title: string, message: string) =>
    c.html(<RefusedPage base={base} title={title} message={message} />, status);
  const jobsFor = async (c: Context): Promise<AnyJobs> => (typeof options.jobs === "function" ? await options.jobs(c) : options.jobs);
  const current = currentSession({ sessions: s, jobs: jobsFor, cookiePath, logger });
  loginRoutes(app, { base, cookiePath, auth, sessions: s, current, env, jobs: jobsFor, now: options.now });

  // Everything below needs a session; state-changing requests also need this site's Origin and the session's token.
  app.use("*", async (c, next) => {
    const live = await current(c);
    const changing = STATE_CHANGING.has(c.req.method);
    if (!live) {
      // Logged out already (a double click, another tab): where the first logout went.
      if (changing && c.req.path === `${base}/logout`) return c.redirect(`${base}/login`, 303);
      if (changing) return refuse(c, 401, "Not logged in", "This action needs a dashboard login, and this request had none (or it expired). Nothing was changed.");
      const url = new URL(c.req.url);
      return c.redirect(`${base}/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
    }
    // Before the form is read: a refused one is read off within a session's bound.
    c.set("session", live.session);
    if (changing) {
      if (!originAllowed(c, auth.origins)) {
        return refuse(c, 403, "Refused", "This request came from another site (its Origin is not the dashboard's). Nothing was changed.");
      }
      const form = await readForm(c.req.raw, SESSION_FORM_BYTES);
      if (!form) return c.html(<RefusedPage base={base} title="Too large" message="This form is larger than the dashboard takes. Nothing was changed." />, 413);
      if (!(await tokenMatches(live.session, form._csrf))) {
        return refuse(c, 403, "Refused", "This form is stale or did not come from the dashboard (its CSRF token does not match). Reload the page and try again. Nothing was changed.");
      }
      c.set("form", form);
    }
    c.set("jobs", live.jobs);
    await next();
  });

  app.post("/logout", async (c) => {
    const session = c.get("session");
    // This browser's cookie goes whatever the database does.
    s.end(c, cookiePath);
    try {
      await logoutSession(c.get("jobs"), await sessionId(session), new Date(session.exp));
    } catch (error) {
      logger.log("error", "dashboard logout: the session could not be ended", { error: errorText(error) });
      const message = "You are logged out in this browser. The database did not answer, so a copy of this session's cookie elsewhere still works until it expires.";
      return c.html(<FailedPage base={base} title="Logged out here only" message={message} />, 503);
    }
    return c.redirect(`${base}/login`, 303);
  });

  const deps = { base, onEnqueued: options.onEnqueued };
  overviewPages(app, deps);
  jobPages(app, deps);
  runPages(app, deps);
  deadLetterPages(app, deps);
  schedulePages(app, deps);

  app.all("*", (c) =>
    c.html(
      <Page title="Not found" base={base} section="overview" csrf={c.var.session.csrf}>
        <p>The dashboard has no page here.</p>
      </Page>,
      404,
    ),
  );

  return app;
};
