import type { Context } from "hono";
import { declaredOver, readUpTo } from "../body-limit.js";
import { JobsError } from "../errors.js";
import { leaveUnread } from "../body-drain.js";
import { ApiError } from "./api-errors.js";
import { inexactIntegerProblem, jsonTextDeeperThan, MAX_PAYLOAD_DEPTH } from "../json-limits.js";

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
/**
 * Deeper request bodies are refused before anything walks them recursively (zod, JSON.stringify,
 * PostgreSQL's parser): a payload's own bound (MAX_PAYLOAD_DEPTH) plus the enqueue's envelope, a
 * batch and its item, so that a payload the library takes is taken over HTTP too.
 */
const MAX_JSON_DEPTH = MAX_PAYLOAD_DEPTH + 2;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;.*)?$/i;

const tooLarge = (limit: number, bytes?: number) =>
  // Named: raising JOBS_MAX_PAYLOAD_BYTES alone left this one where it was, and the answer did not say which limit it was.
  new ApiError("payload_too_large", `the request body is larger than ${limit} bytes (JOBS_MAX_BODY_BYTES)`, bytes === undefined ? { limit } : { limit, bytes });

/** Refuses a declared Content-Length over the limit without reading anything. */
export const checkDeclaredLength = (req: Request, limit: number): void => {
  const declared = declaredOver(req, limit);
  if (declared !== undefined) throw tooLarge(limit, declared);
};

/**
 * Reads the body with a byte counter and stops at the limit, whatever the headers say. The rest is
 * left to settleBody (createApp's first middleware), which reads it off or closes the connection.
 */
const readLimited = async (req: Request, body: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array> => {
  const read = await readUpTo(body, limit);
  if ("bytes" in read) return read.bytes;
  leaveUnread(req, read.over, read.size);
  throw tooLarge(limit);
};

/**
 * The request's JSON body: Content-Type checked (415), size limited before
 * parsing (413), strict UTF-8 and JSON syntax (400), depth bounded (422).
 * With `optional`, an absent or empty body gives undefined.
 */
export const readJson = async (c: Context, limit: number, options: { optional?: boolean } = {}): Promise<unknown> => {
  const req = c.req.raw;
  checkDeclaredLength(req, limit);
  const empty = () => {
    if (options.optional) return undefined;
    throw new ApiError("malformed_json", "the request body is empty; send a JSON document");
  };
  if (!req.body || req.headers.get("content-length")?.trim() === "0") return empty();
  // Read before the type is checked: a server may hand over an empty stream for a request sent
  // without a body (Node does, for `curl -X POST`), and an empty body is no body whatever its type.
  const bytes = await readLimited(req, req.body, limit);
  if (bytes.byteLength === 0) return empty();
  const type = req.headers.get("content-type");
  // A compressed body is not read as it was meant: refused as a type we do not take, not as bad JSON.
  const coding = req.headers.get("content-encoding")?.trim().toLowerCase();
  if (!type || !JSON_TYPE.test(type) || (coding && coding !== "identity")) {
    throw new ApiError("unsupported_media_type", "send the body as uncompressed JSON with Content-Type: application/json", { contentType: type });
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new ApiError("malformed_json", "the request body is not valid UTF-8");
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ApiError("malformed_json", `the request body is not valid JSON: ${(e as Error).message}`);
  }
  if (text.length > 2 * MAX_JSON_DEPTH && jsonTextDeeperThan(text, MAX_JSON_DEPTH)) {
    throw new JobsError("invalid_payload", `the request body is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  const inexact = inexactIntegerProblem(text);
  if (inexact !== undefined) throw new JobsError("invalid_payload", inexact);
  return value;
};


