import { ApiError } from "./api-errors.js";
import { digest, sameDigest } from "../secret-compare.js";

/**
 * `Authorization: Bearer <token>` (scheme case-insensitive); undefined when absent or another scheme.
 * The token is the rest of the header, inner spaces included: a platform cron sends CRON_SECRET as set.
 */
const bearerToken = (header: string | undefined): string | undefined => {
  const m = header ? /^Bearer[ \t]+(\S(?:.*\S)?)[ \t]*$/i.exec(header) : null;
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

/** The shortest API token or cron secret taken: a 3-letter token was found in 17,340 guesses. */
const MIN_SECRET_CHARS = 16;

export const secretsFrom = (raw: string | undefined, variable: string, realm: string, options: { list?: boolean } = {}): Secrets => {
  // A list (comma-separated, for rotation) or one value: a platform cron sends CRON_SECRET exactly as set.
  const values = (options.list === false ? [raw ?? ""] : (raw ?? "").split(",")).map((s) => s.trim()).filter((s) => s.length > 0);
  const closedBecause =
    values.length === 0
      ? `${variable} is not set on the server, so this endpoint is closed`
      : values.some((v) => v.length < MIN_SECRET_CHARS)
        ? `${variable} holds a value shorter than ${MIN_SECRET_CHARS} characters, so this endpoint is closed (a short secret is guessed in seconds)`
        : undefined;
  const reason = values.length === 0 ? "not_configured" : "too_short";
  let digests: Promise<Uint8Array[]> | undefined;
  return {
    closedBecause,
    async check(header) {
      if (closedBecause) throw new ApiError("unauthorized", closedBecause, { reason }, challenge(realm));
      const token = bearerToken(header);
      if (token === undefined) {
        throw new ApiError("unauthorized", "send Authorization: Bearer <token>", { reason: "missing_token" }, challenge(realm));
      }
      digests ??= Promise.all(values.map(digest));
      // Check every configured secret, not stopping at a match, so timing says nothing about which one matched.
      let ok = false;
      for (const d of await digests) ok = (await sameDigest(token, d)) || ok;
      if (!ok) throw new ApiError("unauthorized", `the token is not valid: this route takes ${variable}`, { reason: "invalid_token" }, challenge(realm, "invalid_token"));
    },
  };
};
