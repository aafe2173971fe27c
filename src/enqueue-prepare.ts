import { isoWithMicros, parseIsoInstant } from "./iso-time.js";
import { JobsError } from "./errors.js";
import type { EnqueueItem, EnqueueOptions } from "./enqueue.js";
import { flowKeysFor } from "./flow/keys.js";
import { newJobId } from "./ids.js";
import type { AnyJob } from "./job.js";
import { checkPayload, keyText } from "./payload.js";
import type { JobsSettings } from "./settings/library.js";
import type { NewJobRow } from "./store/enqueue/insert-jobs.js";
import { isMaxAttempts, MAX_ATTEMPTS } from "./terms.js";

const INT32 = 2_147_483_647;

/** Every enqueue option, once (the HTTP body takes the same; a test holds them alike). */
export const ENQUEUE_OPTIONS = ["runAt", "delayMs", "idempotencyKey", "maxAttempts", "priority", "correlationId", "debounce"] as const satisfies ReadonlyArray<
  keyof EnqueueOptions
>;
// Compiles only while the list names every option of the type.
const listed: Exclude<keyof EnqueueOptions, (typeof ENQUEUE_OPTIONS)[number]> extends never ? true : never = true;
void listed;
const ITEM_FIELDS: ReadonlySet<string> = new Set(["job", "payload", ...ENQUEUE_OPTIONS]);
const DEBOUNCE_FIELDS: ReadonlySet<string> = new Set(["key", "delayMs", "maxWaitMs"]);

/** A misspelt option (`runat`, `delay`) must not silently enqueue a job due now: refused, as over HTTP. */
const checkFields = (value: object, known: ReadonlySet<string>, where: Record<string, unknown>, within = "") => {
  for (const [key, v] of Object.entries(value)) {
    if (v !== undefined && !known.has(key)) {
      badOption(`unknown option ${JSON.stringify(within + key)}; ${within ? `${within.slice(0, -1)} takes` : "an enqueue takes"} ${[...known].filter((k) => k !== "job" && k !== "payload").join(", ")}`, where, within + key);
    }
  }
};

/** A number of milliseconds from 0 to 1e13 (about 317 years). */
const isMillis = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0 && v <= 1e13;

const badOption = (message: string, where: Record<string, unknown>, field: string): never => {
  throw new JobsError("invalid_options", message, { ...where, field });
};


/** Validates one item completely (payload and options) and turns it into the row to insert. */
export const prepareJob = (
  registry: ReadonlyMap<string, AnyJob>,
  settings: JobsSettings,
  item: EnqueueItem,
  where: Record<string, unknown> = {},
  traceparent?: string,
): NewJobRow => {
  checkFields(item, ITEM_FIELDS, where);
  if (typeof item.debounce === "object" && item.debounce !== null) checkFields(item.debounce, DEBOUNCE_FIELDS, where, "debounce.");
  const { job, stored, parsed } = checkPayload(registry, item.job, item.payload, settings.maxPayloadBytes, where);
  let runAt: string | null = null;
  if (item.runAt !== undefined && item.runAt !== null) {
    // A text keeps its microseconds, as the database does: a runAt read back from a job orders as that job does.
    const at = item.runAt instanceof Date ? { ms: item.runAt.getTime(), micros: 0 } : typeof item.runAt === "string" ? parseIsoInstant(item.runAt) : undefined;
    // Years 1970-9999: what every driver and PostgreSQL round-trip exactly.
    if (at === undefined || Number.isNaN(at.ms) || at.ms < 0 || at.ms >= 253_402_300_800_000) {
      return badOption("runAt must be a date or an ISO 8601 time with its offset (2031-01-02T03:04:05Z) between the years 1970 and 9999", where, "runAt");
    }
    runAt = isoWithMicros(at);
  }
  let delayMs: number | null = null;
  if (item.delayMs !== undefined && item.delayMs !== null) {
    if (!isMillis(item.delayMs)) {
      badOption("delayMs must be a number of milliseconds from 0 to 1e13 (about 317 years)", where, "delayMs");
    }
    if (runAt !== null) badOption("give runAt or delayMs, not both", where, "delayMs");
    delayMs = Math.round(item.delayMs);
  }
  let debounceKey: string | null = null;
  let maxWaitMs: number | undefined;
  if (item.debounce !== undefined && item.debounce !== null) {
    const d = item.debounce;
    if (typeof d !== "object" || !isMillis(d.delayMs)) {
      badOption("debounce must be { key, delayMs, maxWaitMs? } with a delayMs from 0 to 1e13 milliseconds", where, typeof d === "object" ? "debounce.delayMs" : "debounce");
    }
    if (runAt !== null || delayMs !== null) badOption("debounce sets when the job is due: give it without runAt or delayMs", where, "debounce");
    if (item.idempotencyKey !== undefined && item.idempotencyKey !== null) badOption("give debounce or idempotencyKey, not both", where, "debounce");
    // Without a key there is nothing to debounce on: it would be a plain delayed job, silently.
    debounceKey = keyText(d.key, "debounce.key", where) ?? badOption("debounce.key must be a string of 1 to 255 characters", where, "debounce.key");
    delayMs = Math.round(d.delayMs);
    if (d.maxWaitMs !== undefined && d.maxWaitMs !== null) {
      // Compared as stored (rounded to the millisecond), as the message shows delayMs.
      if (!isMillis(d.maxWaitMs) || Math.round(d.maxWaitMs) < delayMs) {
        badOption(`debounce.maxWaitMs must be a number of milliseconds from delayMs (${delayMs}) to 1e13`, where, "debounce.maxWaitMs");
      }
      maxWaitMs = Math.round(d.maxWaitMs);
    }
  }
  const priority = item.priority ?? job.priority ?? 0;
  if (!Number.isInteger(priority) || Math.abs(priority) > INT32) badOption(`priority must be an integer from -${INT32} to ${INT32}`, where, "priority");
  const maxAttempts = item.maxAttempts ?? job.maxAttempts ?? settings.defaultMaxAttempts;
  if (!isMaxAttempts(maxAttempts)) {
    badOption(`maxAttempts must be an integer from 1 to ${MAX_ATTEMPTS}`, where, "maxAttempts");
  }
  return {
    id: newJobId(),
    job_name: job.name,
    payload: stored,
    run_at: runAt,
    delay_ms: delayMs,
    priority,
    max_attempts: maxAttempts,
    idempotency_key: keyText(item.idempotencyKey, "idempotencyKey", where),
    correlation_id: keyText(item.correlationId, "correlationId", where),
    debounce_key: debounceKey,
    ...(maxWaitMs !== undefined ? { max_wait_ms: maxWaitMs } : {}),
    ...flowKeysFor(job, parsed, where),
    ...(traceparent ? { traceparent } : {}),
  };
};

