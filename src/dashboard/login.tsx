/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { LOGIN_FORM_BYTES, readForm } from "./form-body.js";
import type { Context, Hono } from "hono";
import type { Env } from "../settings/library.js";
import type { DashboardEnv } from "./dashboard-app.js";
import { originAllowed, type Sessions } from "./auth.js";
import { addressKey, clientAddress, UNKNOWN_ADDRESS } from "./client-address.js";
import type { DashboardAuth } from "./dashboard-settings.js";
import type { AnyJobs } from "./dashboard-context.js";
import { LoginPage, RefusedPage } from "./pages/public.js";
import { loginAttempt } from "../admin/login.js";
import { isJobsError, misconfiguration } from "../errors.js";
import { type LoginVerdict, THROTTLE } from "../store/admin/login-throttle.js";

export interface LoginDeps {
  readonly base: string;
  readonly cookiePath: string;
  readonly auth: Extract<DashboardAuth, { configured: true }>;
  readonly sessions: Sessions;
  /** The request's live session (signed and not logged out), see current-session.ts. */
  readonly current: (c: Context) => Promise<unknown>;
  readonly env: Env;
  /** The jobs instance: its database keeps the throttle, its logger hears about it. */
  readonly jobs: (c: Context) => Promise<AnyJobs>;
  /** The throttle's clock; default the database's. */
  readonly now?: () => Date;
}

const WRONG_PASSWORD = "That password is not right.";

const duration = (s: number) => (s < 90 ? `${s} second${s === 1 ? "" : "s"}` : `${Math.ceil(s / 60)} minutes`);

const verdictText = (v: Exclude<LoginVerdict, { kind: "ok" }>): string =>
  v.kind === "wait"
    ? `Too many failed logins: this try was not checked. Wait ${duration(v.waitS)}, then try again.`
    : v.waitS > 0
      ? `${WRONG_PASSWORD} Too many failed logins: wait ${duration(v.waitS)} before the next try.`
      : WRONG_PASSWORD;

export const loginRoutes = (app: Hono<DashboardEnv>, d: LoginDeps): void => {
  const { base } = d;
  /** Only a path inside the dashboard may be a post-login destination. */
  // Browsers drop tabs and newlines from a URL: mounted at the root, "/\t/evil.test" would become "//evil.test".
  // And the path as a browser resolves it (dot segments, plain or encoded) must stay inside too.
  const inside = (next: string) => URL.canParse(next, "http://x") && new URL(next, "http://x").pathname.startsWith(`${base}/`);
  const safeNext = (next: unknown) =>
    typeof next === "string" && next.startsWith(`${base}/`) && !next.startsWith("//") && !next.includes("\\") && !/[\u0000-\u0020\u007f]/.test(next) && inside(next)
      ? next
      : `${base}/`;

  app.get("/login", async (c) => {
    if (await d.current(c)) return c.redirect(`${base}/`, 303);
    const error = c.req.query("failed") === "1" ? WRONG_PASSWORD : undefined;
    return c.html(<LoginPage base={base} next={safeNext(c.req.query("next"))} error={error} />);
  });

  app.post("/login", async (c) => {
    // A foreign page must not be able to log a browser in either.
    if (!originAllowed(c, d.auth.origins)) {
      return c.html(<RefusedPage base={base} title="Refused" message="This login did not come from the dashboard's own page." />, 403);
    }
    // A body that does not parse is a try without a password: counted, never a 500. One past the
    // limit is refused before it is read whole (this route is open to anyone).
    const read = await readForm(c.req.raw, LOGIN_FORM_BYTES);
    if (!read) return c.html(<RefusedPage base={base} title="Too large" message="This login form is larger than a login can be." />, 413);
    const form: Record<string, unknown> = Object.fromEntries(Object.entries(read).map(([k, v]) => [k, Array.isArray(v) ? v[0] : v]));
    const next = safeNext(form.next);
    const ok = typeof form.password === "string" && (await d.sessions.checkPassword(form.password));
    const address = clientAddress(c, d.auth.address, d.env);
    const key = addressKey(address) ?? UNKNOWN_ADDRESS;
    let jobs: AnyJobs | undefined;
    let verdict: LoginVerdict;
    try {
      jobs = await d.jobs(c);
      verdict = await loginAttempt(jobs, key, ok, d.now?.());
    } catch (error) {
      // Without the throttle's answer no login is let through: a closed door, never a 500.
      jobs?.logger.log("error", "dashboard login: the throttle did not answer", { error: error instanceof Error ? error.message : String(error) });
      // Tables missing or behind this release (its log says what to run), or a database, role or grant the server
      // refuses, are no passing outage: said as the other pages say them.
      const wrong = misconfiguration(error);
      const message = isJobsError(error) && error.code === "invalid_config"
        ? "The database is not set up for this release: its tables are missing or behind (the server's log says what to run)."
        : wrong !== undefined
          ? `The server is misconfigured${wrong}, so logging in cannot work: see its logs.`
          : "Logging in needs the database, and it did not answer. Try again in a moment.";
      return c.html(<LoginPage base={base} next={next} error={message} />, 503);
    }
    if (verdict.kind === "ok") {
      await d.sessions.start(c, d.cookiePath);
      return c.redirect(next, 303);
    }
    if (verdict.kind === "wrong" && verdict.failures === THROTTLE.freeFailures + 1) {
      jobs.logger.log("warn", "dashboard login: repeated failures from one address, its tries now wait", { address: key, failures: verdict.failures });
    }
    if (verdict.kind === "wrong" && verdict.globalFailures === THROTTLE.globalFree + 1) {
      jobs.logger.log("warn", "dashboard login: many failures from many addresses, every address's tries now wait", { failures: verdict.globalFailures });
    }
    if (verdict.waitS > 0) c.header("Retry-After", String(verdict.waitS));
    return c.html(<LoginPage base={base} next={next} error={verdictText(verdict)} />, verdict.kind === "wait" ? 429 : 401);
  });
};
