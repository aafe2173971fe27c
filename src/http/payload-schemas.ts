// Each job's payload as JSON Schema for /api/openapi.json, from zod's own converter. Kept apart from the
// document: zod's converter is about 7 KB of a worker's gzipped bundle, so the Cloudflare worker leaves it
// out unless asked (`cloudflareWorker(jobsModule, { payloadSchemas: zodPayloadSchemas })`).
import { toJSONSchema } from "zod/v4/core";
import type { AnyJob } from "../job.js";

export type Schema = Record<string, unknown>;

/** How the OpenAPI document describes a job's payload. */
export type PayloadSchemas = (job: AnyJob) => Schema;

/** What makes /api/openapi.json: `openApiDocument` from `pgtick/http` (a Worker leaves it out unless given). */
export type OpenApiDocument = (registry: ReadonlyMap<string, AnyJob>, payloadSchemas?: PayloadSchemas) => Schema;

/** A job's payload as JSON Schema (the input side: what a client sends). Unrepresentable parts become `{}`. */
export const zodPayloadSchemas: PayloadSchemas = (job) => {
  try {
    const { $schema: _drop, ...schema } = toJSONSchema(job.schema, { io: "input", unrepresentable: "any" }) as Schema;
    return schema;
  } catch {
    return { description: "this payload schema has no JSON Schema form (checked by the server)" };
  }
};

/** Without a converter: any JSON, which the server checks against the job's schema. */
export const opaquePayloadSchemas: PayloadSchemas = () => ({
  description: "the job's payload, checked by the server against its schema (this deployment leaves payload schemas out of the document)",
});
