import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import type { Env } from "../settings/library.js";

const SECRET_NAMES = ["JOBS_API_TOKEN", "CRON_SECRET", "DASHBOARD_PASSWORD"] as const;
export type DevSecrets = Record<(typeof SECRET_NAMES)[number], string>;

/**
 * The tokens the app needs, generated on first run into a git-ignored file
 * (readable by this user only) and reused after; a variable set in the
 * environment wins over the file.
 */
export const loadSecrets = (file: string, env: Env): { secrets: DevSecrets; created: boolean } => {
  const stored: Partial<DevSecrets> = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Partial<DevSecrets>) : {};
  let created = false;
  const secrets = {} as DevSecrets;
  for (const name of SECRET_NAMES) {
    if (!stored[name]) {
      stored[name] = randomBytes(24).toString("base64url");
      created = true;
    }
    secrets[name] = env[name] || stored[name]!;
  }
  if (created) writeFileSync(file, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  return { secrets, created };
};
