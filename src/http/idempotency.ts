import type { Context } from "hono";
import { JobsError } from "../errors.js";

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
