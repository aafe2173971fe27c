import { JobsError } from "../errors.js";
import { type FlowKeys, flowKeysFor } from "../flow/keys.js";
import type { AnyJob } from "../job.js";
import { parsePayload } from "../payload.js";
import type { LetterKeys } from "../store/admin/replay-bulk.js";

/**
 * The keys a replayed dead letter counts under, computed again from its payload by its job as the
 * code defines it now: a replay is a new life of the job, so a limit added since it died holds it
 * (the usual reason to replay: its jobs died of a provider's 429s, and a limit was added), a
 * changed key function is used, and a removed limit no longer keys it. Undefined: keep the letter's
 * own keys (its job is not in this code, or its payload no longer fits the schema, so its run fails
 * as it would have). Throws `invalid_options` when a key function refuses the payload.
 */
export const replayKeys = (registry: ReadonlyMap<string, AnyJob>, jobName: string, payload: unknown, id: string): FlowKeys | undefined => {
  const job = registry.get(jobName);
  if (!job) return undefined;
  const parsed = parsePayload(job, payload);
  return parsed.ok ? flowKeysFor(job, parsed.data, { id }) : undefined;
};

/** A bulk replay's view: a key function's refusal skips that letter (it stays), and the others go on. */
export const letterKeys = (registry: ReadonlyMap<string, AnyJob>, jobName: string, payload: unknown, id: string): LetterKeys => {
  try {
    return { keys: replayKeys(registry, jobName, payload, id) };
  } catch (error) {
    if (error instanceof JobsError) return { refused: error.message };
    throw error;
  }
};
