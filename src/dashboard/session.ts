// A signed session: the cookie holds its expiry and its CSRF token, signed with
// HMAC-SHA-256 through Web Crypto, so it verifies the same on Node, Vercel Edge
// and workerd. Only sessions ended by a logout are kept in a table (migration 022).

const encoder = new TextEncoder();

const b64url = (bytes: Uint8Array): string => {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
};

const fromB64url = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return undefined;
  try {
    const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(s, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
};

export interface Session {
  /** Expiry, milliseconds since the epoch. */
  readonly exp: number;
  /** Put in every form and compared on every state-changing request. */
  readonly csrf: string;
}

/**
 * What a logout records of a session: a SHA-256 of its random token (which forms carry), so the
 * table that ends sessions holds nothing a request could present.
 */
export const sessionId = async (session: Session): Promise<string> =>
  b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(`pgtick session ${session.csrf}`))));

export const randomToken = (bytes = 24): string => b64url(crypto.getRandomValues(new Uint8Array(bytes)));

/**
 * Web Crypto's CryptoKey, named through the `crypto` global: the DOM's lib, @types/node and the Workers'
 * types all have that, while only the DOM's has the global name (so the package's .d.ts type-check in a
 * Node app's project without "DOM" in its lib, even without skipLibCheck).
 */
export type SessionKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** An HMAC key for signing sessions. */
export const sessionKey = (secret: string): Promise<SessionKey> =>
  crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);

export const signSession = async (key: SessionKey, session: Session): Promise<string> => {
  const body = b64url(encoder.encode(JSON.stringify({ exp: session.exp, csrf: session.csrf })));
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(body)));
  return `${body}.${b64url(mac)}`;
};

/**
 * The session a cookie holds, or undefined when it is forged, malformed or expired. With `ttlMs` (the
 * lifetime logins get now), one that would last longer than that is over too: a shorter
 * DASHBOARD_SESSION_TTL ends the logins made under a longer one (they lasted to their own end).
 */
export const verifySession = async (key: SessionKey, cookie: string | undefined, now = Date.now(), ttlMs = Infinity): Promise<Session | undefined> => {
  if (!cookie || cookie.length > 1_000) return undefined;
  const [body, mac, extra] = cookie.split(".");
  if (!body || !mac || extra !== undefined) return undefined;
  const macBytes = fromB64url(mac);
  // crypto.subtle.verify compares in constant time.
  if (!macBytes || !(await crypto.subtle.verify("HMAC", key, macBytes, encoder.encode(body)))) return undefined;
  const json = fromB64url(body);
  if (!json) return undefined;
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(json));
    if (typeof value !== "object" || value === null) return undefined;
    const { exp, csrf } = value as Record<string, unknown>;
    if (typeof exp !== "number" || typeof csrf !== "string" || exp <= now || exp > now + ttlMs) return undefined;
    return { exp, csrf };
  } catch {
    return undefined;
  }
};

export { sameText } from "../secret-compare.js";
