import type { Handoff } from "../tick/types.js";

/**
 * How one tick invocation asks another: `POST /api/tick` with CRON_SECRET and
 * these headers. The kick header selects the short kick budget; the handoff
 * header names a slot reserved for this tick (fan-out, continuation); the async
 * header asks for `202 Accepted` at once, the tick running on after the response.
 */
const KICK_HEADER = "x-jobs-kick";
const HANDOFF_HEADER = "x-pgtick-handoff";
const ASYNC_HEADER = "x-pgtick-async";

/** What a tick invocation was asked to do. */
export interface TickRequest {
  readonly kick?: boolean;
  readonly handoff?: Handoff;
  /** Answer at once and run the tick after the response (where the platform keeps the invocation alive). */
  readonly async?: boolean;
}

const HANDOFF = /^(\d{1,3})\.([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;

/** The tick request an incoming `/api/tick` carries (a malformed handoff is ignored: the tick takes any free slot). */
export const readTickRequest = (header: (name: string) => string | undefined): TickRequest => {
  const m = HANDOFF.exec(header(HANDOFF_HEADER) ?? "");
  return {
    kick: header(KICK_HEADER) === "1",
    handoff: m ? { slot: Number(m[1]), token: m[2]!.toLowerCase() } : undefined,
    async: header(ASYNC_HEADER) === "1",
  };
};

/** The request that starts a tick invocation at `url`. */
export const tickRequest = (url: string, secret: string, req: TickRequest): Request => {
  const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
  if (req.kick) headers[KICK_HEADER] = "1";
  if (req.handoff) headers[HANDOFF_HEADER] = `${req.handoff.slot}.${req.handoff.token}`;
  if (req.async) headers[ASYNC_HEADER] = "1";
  return new Request(url, { method: "POST", headers });
};
