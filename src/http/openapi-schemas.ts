import { toJSONSchema } from "zod/v4/core";
import type { AnyJob } from "../job.js";
import { DEAD_REASONS } from "../terms.js";
import { PAYLOAD_PREVIEW_CHARS } from "../store/admin/views.js";
import { MAX_LIMIT } from "../store/shared/paging.js";
import { STATUS, type ApiErrorCode } from "./api-errors.js";

export type Schema = Record<string, unknown>;

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
  for (const code of [...codes, "unauthorized", "internal"] as ApiErrorCode[]) {
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

export const jobProperties = {
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
};

// List rows carry these instead of the payload, so a page stays small whatever the payloads weigh.
export const previewProperties = {
  payloadPreview: {
    type: "string",
    maxLength: PAYLOAD_PREVIEW_CHARS,
    description: `the payload's JSON text as PostgreSQL writes it, cut to its first ${PAYLOAD_PREVIEW_CHARS} characters (for showing; a cut text is not JSON)`,
  },
  payloadBytes: { type: "integer", minimum: 0, description: "size in bytes (UTF-8) of the whole JSON text" },
  payloadTruncated: { type: "boolean", description: "whether the preview was cut" },
};

