import type { AnyJob } from "../job.js";
import { DEAD_REASONS, JOB_STATUSES, MAX_NEXT_RUNS, MAX_RUNS_PER_PAGE } from "../terms.js";
import { MAX_BULK_REPLAY } from "../store/admin/replay-bulk.js";
import { STATUS } from "./api-errors.js";
import {
  componentNames, deadLetterProperties, enqueueOptions, errors, jobProperties, json, listParams, nullable, page, path, previewProperties, query, ref,
  runProperties, type Schema, scheduleSchema, statsSchema, TIME,
} from "./openapi-schemas.js";
import { ROUTE_SUMMARIES } from "./route-summaries.js";
import { ROUTES, type RouteName } from "./route-table.js";
import { RUN_OUTCOMES } from "../store/runs/run-views.js";
import { MAX_BATCH } from "./routes/jobs.js";

import { opaquePayloadSchemas, type PayloadSchemas } from "./payload-schemas.js";

/** What the document says about one route beyond its table entry (method, path, summary, auth). */
interface Operation {
  readonly parameters?: Schema[];
  readonly requestBody?: Schema;
  readonly responses: Schema;
}

const body = (schema: Schema, required = true) => ({ required, content: { "application/json": { schema } } });
const ids = { type: "array", minItems: 1, maxItems: MAX_BULK_REPLAY, items: { type: "string" } };
const enqueued = { oneOf: [ref("Enqueued"), { type: "object", required: ["items"], properties: { items: { type: "array", items: ref("Enqueued") } } }] };
const flag = (name: string) => json({ type: "object", properties: { id: { type: "string" }, [name]: { const: true } } });

/** Every route's request and responses, by its name in the route table: the compiler says when one is missing. */
const rerunResult = { type: "object", properties: { id: { type: "string", format: "uuid" }, runId: { type: "string" }, deduplicated: { type: "boolean" } } };

const OPERATIONS: Record<RouteName, Operation> = {
  enqueue: {
    parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" }, description: "single job only" }],
    requestBody: body({ oneOf: [ref("Enqueue"), { type: "array", maxItems: MAX_BATCH, items: ref("Enqueue") }] }),
    responses: {
      "201": json(enqueued, "stored"),
      "200": json(enqueued, "nothing new was stored: every job matched a live job's idempotency key, or a debounce moved a queued job"),
      ...errors("malformed_json", "unsupported_media_type", "payload_too_large", "unknown_job", "invalid_payload", "invalid_options"),
    },
  },
  list: {
    parameters: [...listParams, query("status", { enum: [...JOB_STATUSES] }, "only this status")],
    responses: { "200": json(page("JobSummary"), "rows carry a payload preview; GET /api/jobs/{id} has the payload"), ...errors("invalid_options") },
  },
  get: { responses: { "200": json(ref("Job")), ...errors("not_found") } },
  cancel: { responses: { "200": flag("cancelled"), ...errors("not_found", "conflict") } },
  run: {
    responses: {
      "200": json({ type: "object", properties: { id: { type: "string" }, runAt: TIME, moved: { type: "boolean", description: "false: it was due already" } } }),
      ...errors("not_found", "conflict"),
    },
  },
  "deadLetters.list": {
    parameters: [...listParams, query("reason", { enum: [...DEAD_REASONS] }, "only this reason")],
    responses: { "200": json(page("DeadLetterSummary"), "rows carry a payload preview; GET /api/dead-letters/{id} has the payload"), ...errors("invalid_options") },
  },
  "deadLetters.replayMany": {
    requestBody: body({
      oneOf: [
        { type: "object", additionalProperties: false, required: ["ids"], properties: { ids } },
        {
          type: "object", additionalProperties: false, description: "a filter; {} is every job's letters, oldest first",
          properties: {
            job: { type: "string", minLength: 1 }, reason: { enum: [...DEAD_REASONS] }, limit: { type: "integer", minimum: 1, maximum: MAX_BULK_REPLAY },
            cursor: { type: "string", minLength: 1, description: "the nextCursor of the call before, to go on from where it stopped" },
          },
        },
      ],
    }),
    responses: {
      "200": json({
        type: "object",
        properties: {
          replayed: { type: "array", items: { type: "string" } },
          skipped: { type: "array", items: { type: "object", properties: { id: { type: "string" }, reason: { enum: ["not_found", "conflict", "invalid_options"] }, message: { type: "string" } } } },
          remaining: { type: "integer" },
          nextCursor: { type: ["string", "null"], description: "by filter: pass back as cursor to go on; null once a call has read to the end" },
        },
      }),
      ...errors("malformed_json", "unsupported_media_type", "payload_too_large", "invalid_payload", "invalid_options", "conflict"),
    },
  },
  "deadLetters.discardMany": {
    requestBody: body({ type: "object", additionalProperties: false, required: ["ids"], properties: { ids } }),
    responses: {
      "200": json({ type: "object", properties: { discarded: { type: "array", items: { type: "string" } }, missing: { type: "array", items: { type: "string" } } } }),
      ...errors("malformed_json", "unsupported_media_type", "payload_too_large", "invalid_payload", "invalid_options"),
    },
  },
  "deadLetters.get": { responses: { "200": json(ref("DeadLetter")), ...errors("not_found") } },
  "deadLetters.replay": {
    requestBody: body({
      type: "object",
      additionalProperties: false,
      properties: {
        payload: { description: "an edited payload, checked against the job's schema" },
        replays: { type: "integer", minimum: 0, description: "replay only the letter replayed this many times (as you saw it): a second click or a retry is 404" },
      },
    }, false),
    responses: {
      "200": flag("replayed"),
      ...errors("not_found", "unknown_job", "invalid_payload", "invalid_options", "payload_too_large", "conflict", "malformed_json", "unsupported_media_type"),
    },
  },
  "deadLetters.discard": { responses: { "200": flag("discarded"), ...errors("not_found") } },
  "runs.list": {
    parameters: [
      ...listParams,
      query("outcome", { enum: [...RUN_OUTCOMES] }, "only this outcome"),
      query("jobId", { type: "string", format: "uuid" }, "only this job's runs"),
      query("correlationId", { type: "string" }, "only runs with this correlation id"),
      query("idempotencyKey", { type: "string" }, "only runs with this idempotency key"),
      query("since", TIME, "finished at or after"),
      query("until", TIME, "finished before"),
    ],
    responses: { "200": json(page("RunSummary"), "rows without output, stack and logs; GET /api/runs/{id} has them"), ...errors("invalid_options") },
  },
  "runs.get": { responses: { "200": json(ref("Run")), ...errors("not_found") } },
  "runs.rerun": {
    parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" }, description: "a repeat with the same key returns the job the first queued" }],
    requestBody: {
      required: false,
      content: { "application/json": { schema: { type: "object", additionalProperties: false, properties: { idempotencyKey: { type: "string" } } } } },
    },
    responses: {
      "201": json(rerunResult, "the new job"),
      "200": json(rerunResult, "a repeat of an idempotency key: the job the first queued"),
      ...errors("not_found", "unknown_job", "invalid_payload", "payload_too_large", "invalid_options", "malformed_json", "unsupported_media_type"),
    },
  },
  "schedules.list": {
    parameters: [
      query("next", { type: "integer", minimum: 0, maximum: MAX_NEXT_RUNS, default: 5 }, `how many next run times to list (limit × next at most ${MAX_RUNS_PER_PAGE})`),
      ...listParams.filter((p) => p.name !== "job"),
    ],
    responses: { "200": json(page("Schedule"), "by name"), ...errors("invalid_options") },
  },
  "schedules.pause": { responses: { "200": json(ref("Schedule"), "the schedule"), ...errors("not_found") } },
  "schedules.resume": { responses: { "200": json(ref("Schedule"), "the schedule"), ...errors("not_found") } },
  "schedules.run": {
    parameters: [{ name: "Idempotency-Key", in: "header", required: false, schema: { type: "string" } }],
    requestBody: body({ type: "object", additionalProperties: false, properties: { idempotencyKey: { type: "string", minLength: 1, maxLength: 255 } } }, false),
    responses: {
      "201": json({ type: "object", properties: { id: { type: "string" }, deduplicated: { const: false } } }),
      "200": json({ type: "object", properties: { id: { type: "string" }, deduplicated: { const: true } } }, "a job with the key was queued or running: that one"),
      ...errors("not_found", "invalid_options", "malformed_json", "unsupported_media_type", "payload_too_large"),
    },
  },
  stats: { responses: { "200": json(statsSchema), ...errors("invalid_options") } },
  health: {
    responses: {
      "200": json({ type: "object", required: ["ok", "lastTickAt"], properties: { ok: { const: true }, lastTickAt: nullable("string") } }),
      "503": json(ref("Error"), "database unreachable, or misconfigured"),
    },
  },
  tick: {
    responses: {
      "200": json({ type: "object" }, "the tick's report"),
      "202": { description: "with `x-pgtick-async: 1`: accepted, the tick runs on after the answer" },
      "405": json(ref("Error"), "error: method_not_allowed (HEAD)"),
      ...errors(),
    },
  },
  "tick.get": {
    responses: {
      "200": json({ type: "object" }, "the tick's report"),
      "202": { description: "with `x-pgtick-async: 1`: accepted, the tick runs on after the answer" },
      ...errors(),
    },
  },
  openapi: { responses: { "200": json({ type: "object" }), "401": json(ref("Error"), "error: unauthorized"), "404": json(ref("Error"), "error: no_route (an app built without the document)") } },
};

const SECURITY = { token: [{ apiToken: [] }], cron: [{ cronSecret: [] }], open: [] } as const;

/** A token route that lists no query parameters refuses any (422 invalid_options): said here once, for all of them. */
const refusingQuery = (responses: Schema): Schema => {
  const said = (responses["422"] as { description?: string } | undefined)?.description;
  return said?.includes("invalid_options") ? responses : { ...responses, "422": json(ref("Error"), said ? `${said}, invalid_options` : "error: invalid_options") };
};

/** The `paths` of the document, one operation per entry of the route table. */
const pathsFromTable = (): Schema => {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, route] of Object.entries(ROUTES) as Array<[RouteName, (typeof ROUTES)[RouteName]]>) {
    const key = route.path.replace(/:(\w+)/g, "{$1}");
    const params = [...route.path.matchAll(/:(\w+)/g)].map((m) => path(m[1]!));
    const op = OPERATIONS[name];
    paths[key] ??= params.length > 0 ? { parameters: params } : {};
    const responses = route.auth === "token" && !("query" in route) ? refusingQuery(op.responses) : op.responses;
    paths[key]![route.method.toLowerCase()] = { operationId: name, summary: ROUTE_SUMMARIES[name], security: SECURITY[route.auth], ...op, responses };
  }
  return paths;
};

/**
 * A payload schema's own references (`#`, `#/$defs/...`, as zod writes a recursive or named schema)
 * made to point into its component: in the document, `#` is the document's root.
 */
const rebased = (value: unknown, at: string): Schema =>
  JSON.parse(JSON.stringify(value), (key, v: unknown) => (key === "$ref" && typeof v === "string" && v.startsWith("#") ? at + v.slice(1) : v)) as Schema;

/** The OpenAPI 3.1 document of the API, with each defined job's payload schema as `payloadSchemas` gives it. */
export const openApiDocument = (registry: ReadonlyMap<string, AnyJob>, payloadSchemas: PayloadSchemas = opaquePayloadSchemas): Schema => {
  const jobs = [...registry.values()];
  const names = componentNames(jobs);
  const componentName = (job: string) => names.get(job)!;
  // The options are one component every job's envelope refers to: repeated in each, they were 86% of a
  // 2.9 MB document at 2,000 jobs. `unevaluatedProperties` (JSON Schema 2020-12) sees through the allOf.
  const envelope = (job: AnyJob): Schema => ({
    type: "object",
    allOf: [ref("EnqueueOptions")],
    required: ["job", "payload"],
    properties: { job: { const: job.name }, payload: ref(componentName(job.name)) },
    unevaluatedProperties: false,
  });
  const anyEnqueue = jobs.length > 0 ? { oneOf: jobs.map(envelope) } : { not: {}, description: "no jobs are defined" };
  return {
    openapi: "3.1.0",
    info: {
      title: "pgtick API",
      version: "1",
      description:
        "Enqueue jobs and inspect the queue, dead letters and schedules. Send `Authorization: Bearer <JOBS_API_TOKEN>`. " +
        "Errors are `{ error: { code, message, details? } }`.",
    },
    security: SECURITY.token,
    components: {
      securitySchemes: {
        apiToken: { type: "http", scheme: "bearer", description: "one of the comma-separated JOBS_API_TOKEN values" },
        cronSecret: { type: "http", scheme: "bearer", description: "CRON_SECRET; only for /api/tick" },
      },
      schemas: {
        ...Object.fromEntries(jobs.map((j) => [componentName(j.name), { ...rebased(payloadSchemas(j), `#/components/schemas/${componentName(j.name)}`), "x-job-name": j.name }])),
        Enqueue: anyEnqueue,
        EnqueueOptions: enqueueOptions,
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
        Enqueued: {
          type: "object",
          required: ["id", "deduplicated"],
          properties: {
            id: { type: "string", format: "uuid" },
            deduplicated: { type: "boolean" },
            debounced: { type: "boolean", description: "with debounce: a queued job took this payload and due time" },
          },
        },
        Job: {
          type: "object",
          description: "one job, with its payload",
          properties: {
            ...jobProperties,
            payload: {},
            attempts: { type: "array", items: ref("RunSummary"), description: "its attempts that ended, oldest first (the newest 100)" },
            output: { description: "a succeeded job: what the handler returned" },
            outputTruncated: { type: "boolean" },
            finishedAt: nullable("string"),
            waitingOn: {
              type: ["object", "null"],
              description: "a queued, due job held back by one of its limits: kind (concurrency or rate), key, limit, and the runs or starts that fill it",
            },
          },
        },
        JobSummary: {
          type: "object",
          description: "a row of the jobs list: its payload as a preview (GET /api/jobs/{id} has the payload)",
          properties: { ...jobProperties, status: { enum: [...JOB_STATUSES] }, ...previewProperties },
        },
        RunSummary: { type: "object", description: "a row of the runs list", properties: runProperties },
        Run: {
          type: "object",
          description: "one run, whole",
          properties: {
            ...runProperties,
            maxAttempts: nullable("integer"),
            priority: nullable("integer"),
            stack: nullable("string"),
            output: { description: "what the handler returned (succeeded runs); null when nothing or too much" },
            logs: {
              type: "array",
              description: "its last ctx.log lines (at most 50 / 16 KiB)",
              items: { type: "object", properties: { at: TIME, level: { enum: ["debug", "info", "warn", "error"] }, msg: { type: "string" }, fields: { type: "object" } } },
            },
            payload: { description: "on the run that ended the job, so it can be run again; null on the others" },
          },
        },
        Schedule: scheduleSchema,
        DeadLetter: { type: "object", description: "one dead letter, with its payload", properties: { ...deadLetterProperties, payload: {} } },
        DeadLetterSummary: {
          type: "object",
          description: "a row of the dead letters list: its payload as a preview (GET /api/dead-letters/{id} has the payload)",
          properties: { ...deadLetterProperties, ...previewProperties },
        },
      },
    },
    paths: pathsFromTable(),
  };
};

/** What an enqueue may say beside its job and payload. */
