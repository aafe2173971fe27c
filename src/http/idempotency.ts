import type { Context } from "hono";
import * as z from "zod/mini";
import { JobsError } from "../errors.js";
import { describeIssues } from "../payload.js";
import { readJson } from "./body.js";

const invalid = (message: string, field: string) => new JobsError("invalid_options", message, { field });

/**
 * The request's Idempotency-Key header, checked, with the key the body gives (either or both; they
 * must agree). Header values reach the app as bytes read one per character: UTF-8 arrives mangled
 * (café as cafÃ©), and two headers arrive joined by ", ". Neither can be told from a key meant so.
 */
export const idempotencyKeyOf = (c: Context, fromBody: string | undefined): string | undefined => {
  const header = c.req.header("idempotency-key");
  if (header === undefined) return fromBody;
  if (!/^[\x20-\x7e]*$/.test(header)) {
    throw invalid("the Idempotency-Key header takes printable ASCII only; give any other key as idempotencyKey in the body", "Idempotency-Key");
  }
  if (header.includes(",")) {
    throw invalid("the Idempotency-Key header holds no comma (two such headers arrive joined by commas); give such a key as idempotencyKey in the body", "Idempotency-Key");
  }
  if (fromBody !== undefined && fromBody !== header) throw invalid("the Idempotency-Key header and idempotencyKey in the body differ", "idempotencyKey");
  return header;
};

/** An optional body of a route that queues one job (a rerun, a schedule's run): a key that makes a repeat return the job it queued. */
const KeyBody = z.strictObject({ idempotencyKey: z.optional(z.string()) });

/** The key of such a route: from its optional body `{ idempotencyKey }`, its Idempotency-Key header, or both. */
export const requestKey = async (c: Context, maxBodyBytes: number): Promise<string | undefined> => {
  const body = await readJson(c, maxBodyBytes, { optional: true });
  const parsed = z.safeParse(KeyBody, body === undefined ? {} : body);
  if (!parsed.success) {
    throw new JobsError("invalid_options", `send no body, or { "idempotencyKey": ... } so that a repeat returns the same job`, { issues: describeIssues(parsed.error.issues) });
  }
  return idempotencyKeyOf(c, parsed.data.idempotencyKey);
};
