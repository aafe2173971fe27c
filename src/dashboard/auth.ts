import type { Context, MiddlewareHandler } from "hono";
import type { DashboardAuth } from "./dashboard-settings.js";
import type { AnyJobs } from "./dashboard-context.js";
import { randomToken, sameText, type Session, type SessionKey, sessionKey, signSession, verifySession } from "./session.js";

const COOKIE = "pgtick_dashboard";

export type DashboardVars = { session: Session; jobs: AnyJobs };

type Configured = Extract<DashboardAuth, { configured: true }>;

const isHttps = (c: Context) => new URL(c.req.url).protocol === "https:" || c.req.header("x-forwarded-proto") === "https";

/**
 * This site's origins as a browser names them: the request's, and, behind a proxy that ends TLS and says
 * so (X-Forwarded-Proto, as the Secure cookie flag reads it), the same host over https.
 */
const ownOrigins = (c: Context): string[] => {
  const url = new URL(c.req.url);
  return isHttps(c) ? [url.origin, `https://${url.host}`] : [url.origin];
};

export const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * The Origin check for state-changing requests: a browser always sends Origin
 * on a form POST, so it must be this site (or one configured). Without Origin
 * (a non-browser client), Sec-Fetch-Site, if present, must say same-origin.
 * The per-session token is checked separately, so this is a second lock.
 */
export const originAllowed = (c: Context, extra: readonly string[]): boolean => {
  const origin = c.req.header("origin");
  if (origin !== undefined) return ownOrigins(c).includes(origin) || extra.includes(origin);
  const site = c.req.header("sec-fetch-site");
  return site === undefined || site === "same-origin";
};

/**
 * The session cookie, read and written here: its value is base64url and ".", so nothing needs
 * quoting or decoding (hono/cookie, which does all of that, was about 1 KB of a Worker's bundle).
 * Of two cookies of its name (another path), the first, as a browser sends the most specific first.
 */
const readCookie = (c: Context): string | undefined => {
  for (const part of (c.req.header("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === COOKIE) return part.slice(at + 1).trim();
  }
  return undefined;
};

const writeCookie = (c: Context, value: string, path: string, maxAge: number, expires: Date) => {
  const secure = isHttps(c) ? "; Secure" : "";
  c.header("Set-Cookie", `${COOKIE}=${value}; Max-Age=${maxAge}; Path=${path}; Expires=${expires.toUTCString()}; HttpOnly${secure}; SameSite=Strict`, { append: true });
};

export interface Sessions {
  read(c: Context): Promise<Session | undefined>;
  start(c: Context, path: string): Promise<Session>;
  end(c: Context, path: string): void;
  checkPassword(given: string): Promise<boolean>;
}

export const sessions = (auth: Configured): Sessions => {
  let key: Promise<SessionKey> | undefined;
  const k = () => (key ??= sessionKey(auth.secret));
  return {
    async read(c) {
      // A minute's allowance: servers of one deployment whose clocks differ a little do not end each other's logins.
      return verifySession(await k(), readCookie(c), Date.now(), auth.ttlMs + 60_000);
    },
    async start(c, path) {
      const session: Session = { exp: Date.now() + auth.ttlMs, csrf: randomToken() };
      writeCookie(c, await signSession(await k(), session), path, Math.floor(auth.ttlMs / 1000), new Date(session.exp));
      return session;
    },
    end(c, path) {
      writeCookie(c, "", path, 0, new Date(0));
    },
    checkPassword: (given) => sameText(given, auth.password),
  };
};

/** Security headers for every dashboard response: scripts, styles and fetches only from the dashboard itself, no framing. */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  c.header(
    "Content-Security-Policy",
    "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  if (!c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
};

/** The form's CSRF token matches the session's. */
export const tokenMatches = async (session: Session, given: unknown): Promise<boolean> =>
  typeof given === "string" && given.length > 0 && (await sameText(given, session.csrf));
