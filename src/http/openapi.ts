import { toJSONSchema } from "zod/v4/core";
import type { AnyJob } from "../job.js";
import { MAX_BULK_REPLAY } from "../store/admin/replay-bulk.js";
import { PAYLOAD_PREVIEW_CHARS } from "../store/admin/views.js";
import { MAX_LIMIT } from "../store/shared/paging.js";
import { STATUS, type ApiErrorCode } from "./api-errors.js";
import { MAX_BATCH } from "./routes/jobs.js";

type Schema = Record<string, unknown>;

/** A job's payload as JSON Schema (the input side: what a client sends). Unrepresentable parts become `{}`. */
export const payloadJsonSchema = (job: AnyJob): Schema => {
  try {
    const { $schema: _drop, ...schema } = toJSONSchema(job.schema, { io: "input", unrepresentable: "any" }) as Schema;
    return schema;
  } catch {
    return { description: "this payload schema has no JSON Schema form (checked by the server)" };
  }
};

/**
 * Component names allow only [A-Za-z0-9._-]; job names may hold any other character too,
 * so names that clean up alike ("a:b", "a/b", "a_b") get a numbered suffix instead of
 * overwriting each other.
 */
const componentNames = (jobs: readonly AnyJob[]): Map<string, string> => {
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

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Schema, description = "OK") => ({ description, content: { "application/json": { schema } } });
const nullable = (type: string) => ({ type: [type, "null"] });
const TIME = { type: "string", format: "date-time" };

const errors = (...codes: ApiErrorCode[]) => {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of [...codes, "unauthorized", "internal"] as ApiErrorCode[]) {
    byStatus.set(STATUS[code], [...(byStatus.get(STATUS[code]) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, list]) => [String(status), json(ref("Error"), `error: ${list.join(", ")}`)]));
};

const query = (name: string, schema: Schema, description: string) => ({ name, in: "query", required: false, schema, description });
const path = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });
const page = (item: string) => ({
  type: "object",
  required: ["items", "nextCursor"],
  properties: { items: { type: "array", items: ref(item) }, nextCursor: { ...nullable("string"), description: "pass as cursor for the next page" } },
});
const listParams = [
  query("job", { type: "string" }, "only this job"),
  query("limit", { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: 50 }, "page size"),
  query("cursor", { type: "string" }, "nextCursor of the previous page"),
];

const jobProperties = {
  id: { type: "string", format: "uuid" },
  job: { type: "string" },
  status: { enum: ["queued", "running", "dead"] },
  runAt: nullable("string"),
  priority: { type: "integer" },
  attempt: { type: "integer" },
  maxAttempts: { type: "integer" },
  lastError: nullable("string"),
  idempotencyKey: nullable("string"),
  correlationId: nullable("string"),
  leaseExpiresAt: nullable("string"),
  createdAt: TIME,
  updatedAt: TIME,
  reason: nullable("string"),
  deadAt: nullable("string"),
};

const deadLetterProperties = {
  id: { type: "string", format: "uuid" },
  job: { type: "string" },
  attempts: { type: "integer" },
  maxAttempts: { type: "integer" },
  priority: { type: "integer" },
  reason: { enum: ["permanent", "exhausted", "invalid_payload", "no_handler", "deadline", "lease_expired"] },
  lastError: nullable("string"),
  idempotencyKey: nullable("string"),
  correlationId: nullable("string"),
  createdAt: TIME,
  deadAt: TIME,
};

// List rows carry these instead of the payload, so a page stays small whatever the payloads weigh.
const previewProperties = {
  payloadPreview: {
    type: "string",
    maxLength: PAYLOAD_PREVIEW_CHARS,
    description: `the payload's JSON text as PostgreSQL writes it, cut to its first ${PAYLOAD_PREVIEW_CHARS} characters (for showing; a cut text is not JSON)`,
  },
  payloadBytes: { type: "integer", minimum: 0, description: "size in bytes (UTF-8) of the whole JSON text" },
  payloadTruncated: { type: "boolean", description: "whether the preview was cut" },
};

/** The OpenAPI 3.1 document of the API, with each defined job's payload schema. */
export const openApiDocument = (registry: ReadonlyMap<string, AnyJob>): Schema => {
  const jobs = [...registry.values()];
  const names = componentNames(jobs);
  const componentName = (job: string) => names.get(job)!;
  const envelope = (job: AnyJob): Schema => ({
    type: "object",
    additionalProperties: false,
    required: ["job", "payload"],
    properties: {
      job: { const: job.name },
      payload: ref(componentName(job.name)),
      runAt: { ...TIME, description: "when it becomes due (not with delayMs)" },
      delayMs: { type: "number", minimum: 0, description: "due this long from now (not with runAt)" },
      idempotencyKey: { type: "string", minLength: 1, maxLength: 255, description: "while a job with this key is queued or running, enqueueing returns it" },
      maxAttempts: { type: "integer", minimum: 1, maximum: 1000 },
      priority: { type: "integer", description: "higher runs first" },
      correlationId: { type: "string", minLength: 1, maxLength: 255 },
    },
  });
  const anyEnqueue = jobs.length > 0 ? { oneOf: jobs.map(envelope) } : { not: {}, description: "no jobs are defined" };
  const auth = [{ apiToken: [] }];
  const schedulesName = path("name");
  return {
    openapi: "3.1.0",
    info: {
      title: "pgtick API",
      version: "1",
      description:
        "Enqueue jobs and inspect the queue, dead letters and schedules. Send `Authorization: Bearer <JOBS_API_TOKEN>`. " +
        "Errors are `{ error: { code, message, details? } }`.",
    },
    security: auth,
    components: {
      securitySchemes: {
        apiToken: { type: "http", scheme: "bearer", description: "one of the comma-separated JOBS_API_TOKEN values" },
        cronSecret: { type: "http", scheme: "bearer", description: "CRON_SECRET; only for /api/tick" },
      },
      schemas: {
        ...Object.fromEntries(jobs.map((j) => [componentName(j.name), { ...payloadJsonSchema(j), "x-job-name": j.name }])),
        Enqueue: anyEnqueue,
        Error: {
          type: "object",
          required: ["error"],
          properties: {
            error: {
              type: "object",
              required: ["code", "message"],
              properties: { code: { type: "string", enum: Object.keys(STATUS) }, message: { type: "string" }, details: {} },
            },
          },
        },
        Enqueued: { type: "object", required: ["id", "deduplicated"], properties: { id: { type: "string", format: "uuid" }, deduplicated: { type: "boolean" } } },
        Job: { type: "object", description: "one job, with its payload", properties: { ...jobProperties, payload: {} } },
        JobSummary: {
          type: "object",
          description: "a row of the jobs list: its payload as a preview (GET /api/jobs/{id} has the payload)",
          properties: { ...jobProperties, status: { enum: ["queued", "running"] }, ...previewProperties },
        },
        DeadLetter: { type: "object", description: "one dead letter, with its payload", properties: { ...deadLetterProperties, payload: {} } },
        DeadLetterSummary: {
          type: "object",
          description: "a row of the dead letters list: its payload as a preview (GET /api/dead-letters/{id} has the payload)",
          properties: { ...deadLetterProperties, ...previewProperties },
        },
      },
    },
    paths: {
      "/api/jobs": {
        post: {
          summary: "Enqueue one job, or a batch (an array) in one statement; a bad item stores nothing and the error names its index",
          parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" }, description: "single job only" }],
          requestBody: {
            required: true,
            content: { "application/json": { schema: { oneOf: [ref("Enqueue"), { type: "array", minItems: 1, maxItems: MAX_BATCH, items: ref("Enqueue") }] } } },
          },
          responses: {
            "201": json({ oneOf: [ref("Enqueued"), { type: "object", properties: { items: { type: "array", items: ref("Enqueued") } } }] }, "stored"),
            "200": json({ oneOf: [ref("Enqueued"), { type: "object", properties: { items: { type: "array", items: ref("Enqueued") } } }] }, "every job matched a live job's idempotency key"),
            ...errors("malformed_json", "unsupported_media_type", "payload_too_large", "unknown_job", "invalid_payload", "invalid_options"),
          },
        },
        get: {
          summary: "Queued and running jobs, newest first; each row has a preview of its payload, GET /api/jobs/{id} the payload",
          parameters: [...listParams, query("status", { enum: ["queued", "running"] }, "only this status")],
          responses: { "200": json(page("JobSummary")), ...errors("invalid_options") },
        },
      },
      "/api/jobs/{id}": {
        parameters: [path("id")],
        get: { summary: "A job: queued, running, or dead (finished jobs leave the queue: 404)", responses: { "200": json(ref("Job")), ...errors("not_found") } },
        delete: {
          summary: "Cancel a queued job",
          responses: { "200": json({ type: "object", properties: { id: { type: "string" }, cancelled: { const: true } } }), ...errors("not_found", "conflict") },
        },
      },
      "/api/dead-letters": {
        get: {
          summary: "Dead letters, most recent first; each row has a preview of its payload, GET /api/dead-letters/{id} the payload",
          parameters: [...listParams, query("reason", { type: "string" }, "only this reason")],
          responses: { "200": json(page("DeadLetterSummary")), ...errors("invalid_options") },
        },
      },
      "/api/dead-letters/replay": {
        post: {
          summary: "Replay many dead letters in one statement: by ids, or the oldest of one job",
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  oneOf: [
                    { type: "object", additionalProperties: false, required: ["ids"], properties: { ids: { type: "array", minItems: 1, maxItems: MAX_BULK_REPLAY, items: { type: "string" } } } },
                    { type: "object", additionalProperties: false, required: ["job"], properties: { job: { type: "string" }, limit: { type: "integer", minimum: 1, maximum: MAX_BULK_REPLAY } } },
                  ],
                },
              },
            },
          },
          responses: {
            "200": json({
              type: "object",
              properties: {
                replayed: { type: "array", items: { type: "string" } },
                skipped: { type: "array", items: { type: "object", properties: { id: { type: "string" }, reason: { enum: ["not_found", "conflict"] } } } },
                remaining: { type: "integer" },
              },
            }),
            ...errors("malformed_json", "unsupported_media_type", "payload_too_large", "invalid_options", "conflict"),
          },
        },
      },
      "/api/dead-letters/{id}": {
        parameters: [path("id")],
        get: { summary: "A dead letter", responses: { "200": json(ref("DeadLetter")), ...errors("not_found") } },
        delete: { summary: "Discard a dead letter", responses: { "200": json({ type: "object", properties: { id: { type: "string" }, discarded: { const: true } } }), ...errors("not_found") } },
      },
      "/api/dead-letters/{id}/replay": {
        parameters: [path("id")],
        post: {
          summary: "Queue a dead letter again (its id kept, attempt 0), optionally with an edited payload checked by the job's schema",
          requestBody: { required: false, content: { "application/json": { schema: { type: "object", additionalProperties: false, properties: { payload: {} } } } } },
          responses: {
            "200": json({ type: "object", properties: { id: { type: "string" }, replayed: { const: true } } }),
            ...errors("not_found", "unknown_job", "invalid_payload", "payload_too_large", "conflict", "malformed_json", "unsupported_media_type"),
          },
        },
      },
      "/api/schedules": {
        get: {
          summary: "Schedules with their next runs",
          parameters: [query("next", { type: "integer", minimum: 0, maximum: 100, default: 5 }, "how many next run times to list")],
          responses: { "200": json({ type: "object", properties: { items: { type: "array", items: { type: "object" } } } }), ...errors("invalid_options") },
        },
      },
      ...Object.fromEntries(
        (["pause", "resume", "run"] as const).map((action) => [
          `/api/schedules/{name}/${action}`,
          {
            parameters: [schedulesName],
            post: {
              summary: action === "run" ? "Enqueue the schedule's job now" : `${action[0]!.toUpperCase()}${action.slice(1)} a schedule`,
              responses: { [action === "run" ? "201" : "200"]: json({ type: "object" }), ...errors("not_found") },
            },
          },
        ]),
      ),
      "/api/stats": {
        get: { summary: "Queue depth per job and status, oldest waiting age, dead letters per job, per-minute counts of the last hour", responses: { "200": json({ type: "object" }) } },
      },
      "/api/tick": {
        post: { summary: "Run one tick (the platform cron's target)", security: [{ cronSecret: [] }], responses: { "200": json({ type: "object" }, "the tick's report"), ...errors() } },
        get: { summary: "Run one tick (Vercel Cron sends GET)", security: [{ cronSecret: [] }], responses: { "200": json({ type: "object" }, "the tick's report"), ...errors() } },
      },
      "/api/health": {
        get: { summary: "Liveness and database reachability; no auth", security: [], responses: { "200": json({ type: "object" }), "503": json(ref("Error"), "database unreachable") } },
      },
      "/api/openapi.json": { get: { summary: "This document", responses: { "200": json({ type: "object" }) } } },
    },
  };
};
