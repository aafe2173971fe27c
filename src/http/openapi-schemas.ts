import type { AnyJob } from "../job.js";
import { RUN_OUTCOMES } from "../store/runs/run-views.js";
import { DEAD_REASONS, MAX_ATTEMPTS } from "../terms.js";
import { PAYLOAD_PREVIEW_CHARS } from "../store/admin/views.js";
import { COUNT_BUDGET, COUNT_LIMIT, MIN_KEY_COUNT } from "../store/shared/bounded.js";
import { MAX_LIMIT } from "../store/shared/paging.js";
import { STATUS, type ApiErrorCode } from "./api-errors.js";

export type { Schema } from "./payload-schemas.js";
import type { Schema } from "./payload-schemas.js";

/**
 * Component names allow only [A-Za-z0-9._-]; job names may hold any other character too,
 * so names that clean up alike ("a:b", "a/b", "a_b") get a numbered suffix instead of
 * overwriting each other.
 */
export const componentNames = (jobs: readonly AnyJob[]): Map<string, string> => {
  const names = new Map<string, string>();
  const taken = new Set<string>();
  for (const job of jobs) {
    const base = `Payload.${job.name.replace(/[^A-Za-z0-9._-]/g, "_")}`;
    let name = base;
    for (let n = 2; taken.has(name); n++) name = `${base}.${n}`;
    taken.add(name);
    names.set(job.name, name);
  }
  return names;
};

export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
export const json = (schema: Schema, description = "OK") => ({ description, content: { "application/json": { schema } } });
export const nullable = (type: string) => ({ type: [type, "null"] });
export const TIME = { type: "string", format: "date-time" };

export const errors = (...codes: ApiErrorCode[]) => {
  const byStatus = new Map<number, ApiErrorCode[]>();
  // Any request whose declared body passes JOBS_MAX_BODY_BYTES is refused (413) before it is read.
  for (const code of new Set<ApiErrorCode>([...codes, "unauthorized", "payload_too_large", "internal", "unavailable"])) {
    byStatus.set(STATUS[code], [...(byStatus.get(STATUS[code]) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, list]) => [String(status), json(ref("Error"), `error: ${list.join(", ")}`)]));
};

export const query = (name: string, schema: Schema, description: string) => ({ name, in: "query", required: false, schema, description });
export const path = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
export const page = (item: string) => ({
  type: "object",
  required: ["items", "nextCursor"],
  properties: { items: { type: "array", items: ref(item) }, nextCursor: { ...nullable("string"), description: "pass as cursor for the next page" } },
});
export const listParams = [
  query("job", { type: "string" }, "only this job"),
  query("limit", { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: 50 }, "page size"),
  query("cursor", { type: "string" }, "nextCursor of the previous page"),
];

export const scheduleSchema = {
  type: "object",
  description: "a schedule defined in code, with its stored state",
  properties: {
    name: { type: "string" },
    cron: { type: "string" },
    timezone: { type: "string" },
    job: { type: "string" },
    payload: {},
    missed: { description: '"skip", "latest" or { catchUp: n }' },
    description: { type: "string", description: 'plain words, e.g. "every hour at minute 0 (America/New_York)"' },
    paused: { type: "boolean" },
    nextRuns: { type: "array", items: { type: "string" }, description: "the next occurrences (ISO); the first may be overdue until a tick handles it" },
    lastEnqueuedAt: nullable("string"),
    lastJobId: nullable("string"),
    lastOccurrenceAt: nullable("string"),
  },
};

export const jobProperties = {
  id: { type: "string", format: "uuid" },
  job: { type: "string" },
  status: { enum: ["queued", "running", "dead", "succeeded", "cancelled"] },
  runAt: nullable("string"),
  priority: nullable("integer"),
  attempt: { type: "integer" },
  maxAttempts: nullable("integer"),
  lastError: nullable("string"),
  idempotencyKey: nullable("string"),
  correlationId: nullable("string"),
  leaseExpiresAt: nullable("string"),
  createdAt: TIME,
  updatedAt: TIME,
  reason: nullable("string"),
  deadAt: nullable("string"),
  replays: { type: "integer", description: "times it was replayed from the dead letters (it keeps its first createdAt)" },
};

export const runProperties = {
  id: { type: "string", description: "the run's id (an integer as text; newer runs have higher ids)" },
  jobId: { type: "string", format: "uuid" },
  job: { type: "string" },
  attempt: { type: "integer" },
  outcome: { enum: [...RUN_OUTCOMES] },
  startedAt: nullable("string"),
  finishedAt: TIME,
  durationMs: { ...nullable("integer"), description: "null for a run reclaimed after its tick was killed" },
  error: nullable("string"),
  correlationId: nullable("string"),
  idempotencyKey: nullable("string"),
  createdAt: nullable("string"),
  outputTruncated: { type: "boolean", description: "the return value was larger than JOBS_MAX_OUTPUT_BYTES (or not JSON) and was left out" },
};

export const deadLetterProperties = {
  id: { type: "string", format: "uuid" },
  job: { type: "string" },
  attempts: { type: "integer" },
  maxAttempts: { type: "integer" },
  priority: { type: "integer" },
  reason: { enum: [...DEAD_REASONS] },
  lastError: nullable("string"),
  idempotencyKey: nullable("string"),
  correlationId: nullable("string"),
  createdAt: TIME,
  deadAt: TIME,
  replays: { type: "integer" },
};

// List rows carry these instead of the payload, so a page stays small whatever the payloads weigh.
export const previewProperties = {
  payloadPreview: {
    type: "string",
    maxLength: PAYLOAD_PREVIEW_CHARS,
    description: `the payload's JSON text as PostgreSQL writes it, cut to its first ${PAYLOAD_PREVIEW_CHARS} characters (for showing; a cut text is not JSON)`,
  },
  payloadBytes: { type: ["integer", "null"], minimum: 0, description: "size in bytes (UTF-8) of the whole JSON text; null for a payload of more than 8 KB (compressed or not), whose preview is an outline: its keys, its length, or a long string's start" },
  payloadTruncated: { type: "boolean", description: "whether the preview was cut" },
};


// The stats' counts stop at a limit, so reading them never scans a table.
const boundedCountProperties = {
  count: {
    type: "integer",
    minimum: 0,
    description: `exact up to countLimit (${COUNT_LIMIT}), or less when more than 3 jobs share one read (${COUNT_BUDGET} entries, at least ${MIN_KEY_COUNT} each); with countIsLowerBound, there are more`,
  },
  countIsLowerBound: { const: true, description: `present only when there are more than count: show "${COUNT_LIMIT.toLocaleString("en-US")}+"` },
};

/** GET /api/stats: the fields whose meaning the scale of the tables decides; the rest stays open. */
export const statsSchema: Schema = {
  type: "object",
  properties: {
    countLimit: { type: "integer", const: COUNT_LIMIT, description: "where every count of queue and dead letters stops" },
    queue: {
      type: "array",
      items: {
        type: "object",
        required: ["job", "status", "count", "oldestWaitingMs"],
        properties: { job: { type: "string" }, status: { enum: ["queued", "running"] }, ...boundedCountProperties, oldestWaitingMs: nullable("integer") },
      },
    },
    oldestWaitingMs: nullable("integer"),
    deadLetters: {
      type: "array",
      items: {
        type: "object",
        required: ["job", "count", "lastDeadAt"],
        properties: { job: { type: "string" }, ...boundedCountProperties, lastDeadAt: TIME },
      },
    },
  },
};

/** An option given as null is read as not given (as the library reads undefined). */
const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: "null" }], ...(schema.description ? { description: schema.description } : {}) });

export const enqueueOptions: Schema = {
  type: "object",
  description: "an option given as null is read as not given",
  properties: {
    runAt: orNull({ type: "string", description: "when it becomes due (not with delayMs): an ISO 8601 date and time with its offset, or a date (midnight UTC)" }),
    delayMs: orNull({ type: "number", minimum: 0, maximum: 1e13, description: "due this long from now (not with runAt)" }),
    idempotencyKey: orNull({ type: "string", minLength: 1, maxLength: 255, description: "while a job with this key is queued or running, enqueueing returns it" }),
    maxAttempts: orNull({ type: "integer", minimum: 1, maximum: MAX_ATTEMPTS }),
    priority: orNull({ type: "integer", minimum: -2147483647, maximum: 2147483647, description: "higher runs first" }),
    correlationId: orNull({ type: "string", minLength: 1, maxLength: 255 }),
    debounce: orNull({
      type: "object",
      additionalProperties: false,
      required: ["key", "delayMs"],
      properties: {
        key: { type: "string", minLength: 1, maxLength: 255 },
        delayMs: { type: "number", minimum: 0, maximum: 1e13 },
        maxWaitMs: orNull({ type: "number", minimum: 0, maximum: 1e13, description: "at least delayMs: the job is due no later than this long after the first enqueue of the key that gave one" }),
      },
      description: "while a job with this name and key is queued, replace it with this enqueue (payload, options, due delayMs from now, or sooner as a maxWaitMs caps it); not with runAt, delayMs or idempotencyKey",
    }),
  },
};
