import { ApiError } from "./errors.js";

const encoder = new TextEncoder();

const digest = async (text: string): Promise<Uint8Array> => new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));

/**
 * Compares SHA-256 digests of the two strings with an XOR loop: both digests
 * are 32 bytes whatever the inputs' lengths, so the time does not depend on
 * where they differ or how long the secret is. Web Crypto only, so it runs in
 * Node, workerd and Vercel's Edge runtime alike.
 */
export const sameSecret = async (given: string, expected: Uint8Array): Promise<boolean> => {
  const a = await digest(given);
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ expected[i]!;
  return diff === 0 && a.length === expected.length;
};

/** `Authorization: Bearer <token>` (scheme case-insensitive); undefined when absent or another scheme. */
export const bearerToken = (header: string | undefined): string | undefined => {
  const m = header ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header) : null;
  return m?.[1];
};

/** A set of accepted secrets (one value, or comma-separated values so a token can rotate without downtime). */
export interface Secrets {
  /** Why the endpoint is closed, when no secret is configured. */
  readonly closedBecause?: string;
  check(header: string | undefined): Promise<void>;
}

const challenge = (realm: string, error?: string) => ({
  "WWW-Authenticate": `Bearer realm="${realm}"${error ? `, error="${error}"` : ""}`,
});

export const secretsFrom = (raw: string | undefined, variable: string, realm: string, options: { list?: boolean } = {}): Secrets => {
  // A list (comma-separated, for rotation) or one value: a platform cron sends CRON_SECRET exactly as set.
  const values = (options.list === false ? [raw ?? ""] : (raw ?? "").split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
  const closedBecause = values.length === 0 ? `${variable} is not set on the server, so this endpoint is closed` : undefined;
  let digests: Promise<Uint8Array[]> | undefined;
  return {
    closedBecause,
    async check(header) {
      if (closedBecause) throw new ApiError("unauthorized", closedBecause, { reason: "not_configured" }, challenge(realm));
      const token = bearerToken(header);
      if (token === undefined) {
        throw new ApiError("unauthorized", "send Authorization: Bearer <token>", { reason: "missing_token" }, challenge(realm));
      }
      digests ??= Promise.all(values.map(digest));
      // Check every configured secret, not stopping at a match, so timing says nothing about which one matched.
      let ok = false;
      for (const d of await digests) ok = (await sameSecret(token, d)) || ok;
      if (!ok) throw new ApiError("unauthorized", "the token is not valid", { reason: "invalid_token" }, challenge(realm, "invalid_token"));
    },
  };
};
