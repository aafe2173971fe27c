/**
 * The byte limit of a request body, shared by the API's JSON bodies and the dashboard's forms: a
 * declared Content-Length over it is refused before anything is read, and a body is counted while
 * it is read, so one is never buffered whole past the limit (a chunked body declares nothing).
 */

/** The declared Content-Length when it is over `limit`, else undefined. */
export const declaredOver = (req: Request, limit: number): number | undefined => {
  const declared = req.headers.get("content-length")?.trim();
  return declared && /^\d+$/.test(declared) && Number(declared) > limit ? Number(declared) : undefined;
};

/** A body read to its end within the limit, or, past it, its reader (still open, for the caller to cancel or read off) and the bytes seen. */
export type UpTo = { readonly bytes: Uint8Array<ArrayBuffer> } | { readonly over: ReadableStreamDefaultReader<Uint8Array>; readonly size: number };

/**
 * The client went away before its body was read whole (the connection reset). Not the database's doing:
 * the driver's words for it (ECONNRESET) had it answered and logged as a database outage.
 */
export class BodyCut extends Error {
  override readonly name = "BodyCut";
}

export const readUpTo = async (body: ReadableStream<Uint8Array>, limit: number): Promise<UpTo> => {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      throw new BodyCut("the request's body was cut off before it was read whole (the client went away)", { cause: error });
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) return { over: reader, size };
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { bytes };
};
