// A request refused before its body was read leaves that body on the connection.
// Node servers cannot then reuse the socket: @hono/node-server answers with
// `Connection: keep-alive` and cuts the socket about 500 ms later (its drain
// stalls once the body's web stream was started), so a request the client sent
// on it in between is lost. Reading the rest off before answering keeps the
// connection usable; past a bound, the answer says `Connection: close` instead.

/**
 * How much of a refused request is read in all (what the handler read and what is discarded)
 * before the connection is given up: twice the body limit, so the cost stays what the limit allows.
 */
export const drainBound = (maxBodyBytes: number): number => 2 * maxBodyBytes;
/** And for at most this long, so a client trickling a refused body does not hold the request. */
const DRAIN_MAX_MS = 2_000;

type Reader = ReadableStreamDefaultReader<Uint8Array>;

/** Readers stopped part-way (at the body limit), by request, with the bytes they read: settled before the answer goes out. */
const leftOver = new WeakMap<Request, { reader: Reader; read: number }>();

/** Hands over a reader that stopped before the end of the body, after `read` bytes, for settleBody to finish. */
export const leaveUnread = (req: Request, reader: Reader, read: number): void => {
  leftOver.set(req, { reader, read });
};

const declaredLength = (req: Request): number | undefined => {
  const raw = req.headers.get("content-length")?.trim();
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
};

/** Reads to the end and discards, within the bounds; false if it stopped short. */
const discard = async (reader: Reader, read: number, maxBytes: number): Promise<boolean> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), DRAIN_MAX_MS);
  });
  let bytes = read;
  let ended = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), late]);
      if (next === "late") return false;
      if (next.done) return (ended = true);
      bytes += next.value.byteLength;
      if (bytes > maxBytes) return false;
    }
  } catch {
    // The client went away mid-body: there is no connection left to keep.
    return false;
  } finally {
    clearTimeout(timer);
    if (!ended) await reader.cancel().catch(() => {});
  }
};

/**
 * Makes sure nothing of the request body is left on the connection: what the
 * handler did not read is read and discarded, as long as the request stays
 * within `maxBytes` in all (see drainBound) and DRAIN_MAX_MS. Resolves false
 * when it was not, or would cost more than that: the answer must then close
 * the connection.
 */
export const settleBody = async (req: Request, maxBytes: number): Promise<boolean> => {
  const left = leftOver.get(req);
  if (left) {
    leftOver.delete(req);
    return discard(left.reader, left.read, maxBytes);
  }
  if (req.method === "GET" || req.method === "HEAD" || req.body === null || req.bodyUsed) return true;
  // Locked but not read: someone else holds it, and what is left is unknown.
  if (req.body.locked) return false;
  const declared = declaredLength(req);
  // Not worth reading a body announced this large only to keep one connection.
  if (declared !== undefined && declared > maxBytes) return false;
  return discard(req.body.getReader(), 0, maxBytes);
};
