import { read } from "../settings/catalog.js";
import type { Env } from "../settings/parse.js";

const MAX_TTL_MS = 24 * 86_400_000;
import type { AddressSource } from "./client-address.js";

export const MIN_PASSWORD = 12;
export const MIN_SECRET = 32;
const DEFAULT_TTL_MS = 12 * 3_600_000;

export interface DashboardAuthOptions {
  /** Default: env DASHBOARD_PASSWORD. */
  readonly password?: string | undefined;
  /** Signs session cookies. Default: env DASHBOARD_SECRET, else derived from the password. */
  readonly secret?: string | undefined;
  /** How long a login lasts. Default: env DASHBOARD_SESSION_TTL (a duration such as 8h), else 12h. */
  readonly sessionTtlMs?: number | undefined;
  /** Origins allowed to post besides the request's own (a proxy that rewrites Host). Default: env DASHBOARD_ORIGINS, comma-separated. */
  readonly allowedOrigins?: readonly string[] | undefined;
  /**
   * The header that carries the client's address, for the login throttle, when a proxy of your own
   * sets it (for `x-forwarded-for`, its last entry). Default: env DASHBOARD_CLIENT_IP_HEADER, else
   * what the platform sets (`cf-connecting-ip` on Cloudflare, `x-real-ip` on Vercel, the socket on Node).
   */
  readonly clientIpHeader?: string | undefined;
}

export type DashboardAuth =
  | { readonly configured: false; readonly problem: string }
  | {
      readonly configured: true;
      readonly password: string;
      readonly secret: string;
      readonly ttlMs: number;
      readonly origins: readonly string[];
      readonly address: AddressSource;
    };

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;

/** Reads the dashboard's login settings; anything missing or weak leaves the dashboard closed, saying why. */
export const resolveAuth = (env: Env, options: DashboardAuthOptions = {}): DashboardAuth => {
  const password = options.password ?? read(env, "DASHBOARD_PASSWORD") ?? "";
  if (password === "") return { configured: false, problem: "DASHBOARD_PASSWORD is not set." };
  if (password.length < MIN_PASSWORD) {
    return { configured: false, problem: `DASHBOARD_PASSWORD is shorter than ${MIN_PASSWORD} characters.` };
  }
  const explicit = options.secret ?? read(env, "DASHBOARD_SECRET");
  if (explicit !== undefined && explicit !== "" && explicit.length < MIN_SECRET) {
    return { configured: false, problem: `DASHBOARD_SECRET is shorter than ${MIN_SECRET} characters.` };
  }
  // Derived from the password, so changing the password also ends every session.
  const secret = explicit || `pgtick-dashboard-session\u0000${password}`;
  let ttlMs: number;
  try {
    ttlMs = options.sessionTtlMs ?? read(env, "DASHBOARD_SESSION_TTL") ?? DEFAULT_TTL_MS;
  } catch {
    ttlMs = 0;
  }
  // At most 24 days: what a duration setting takes (a timer's limit), and well within a cookie's 400-day Max-Age.
  if (!(ttlMs >= 60_000 && ttlMs <= MAX_TTL_MS)) return { configured: false, problem: "DASHBOARD_SESSION_TTL must be a duration from 1m to 24d, such as 8h." };
  // As a browser sends them (lower-case, no path): one pasted from the address bar, with its trailing slash, never matched.
  let origins: string[];
  try {
    // A URL's origin is "null" for schemes other than http(s) (chrome-extension://...): such an entry is
    // kept as given (less a trailing slash), never as "null", which sandboxed frames send.
    origins = (options.allowedOrigins ?? read(env, "DASHBOARD_ORIGINS") ?? []).map((o) => {
      const origin = new URL(o).origin;
      return origin === "null" ? o.trim().replace(/\/+$/, "") : origin;
    });
  } catch {
    return { configured: false, problem: "DASHBOARD_ORIGINS must be origins such as https://admin.example.com, comma-separated." };
  }
  const header = (options.clientIpHeader ?? read(env, "DASHBOARD_CLIENT_IP_HEADER") ?? "").trim().toLowerCase();
  if (header !== "" && !HEADER_NAME.test(header)) {
    return { configured: false, problem: "DASHBOARD_CLIENT_IP_HEADER must be the name of one header, such as x-real-ip." };
  }
  const address: AddressSource = header === "" ? { kind: "auto" } : { kind: "header", name: header };
  return { configured: true, password, secret, ttlMs, origins, address };
};
