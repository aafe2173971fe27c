// PostgreSQL's cancel request for a statement a pool's client is running, sent the way node-postgres
// (and Neon's fork of it) does, through the client's own classes: no driver is imported here.

/** What a node-postgres (or Neon) Client keeps of its connection: enough to cancel its statement. */
interface Cancellable {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
  readonly connectionParameters?: { readonly host?: string; readonly port?: number };
}
interface CancelConnection {
  on(event: string, listener: () => void): unknown;
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  readonly stream?: { unref?(): unknown; destroy?(): unknown };
}

/** How long a cancel request's own connection may stay open: a server that neither answers nor closes it kept it (and a CLI process) for minutes. */
const CANCEL_WITHIN_MS = 5_000;

/** Cancel requests not yet delivered or given up: a process about to exit waits for them (see `cancelsSent`). */
const sending = new Set<Promise<void>>();

/**
 * Resolves once every cancel request sent so far was delivered or given up, or after `ms`. A CLI
 * that exited at once after a statement's bound sent none of them: the statement it said had
 * failed ran when its lock freed, and an operator who tried again got two jobs.
 */
export const cancelsSent = async (ms: number): Promise<void> => {
  if (sending.size === 0) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([Promise.all(sending), new Promise<void>((done) => (timer = setTimeout(done, ms)))]).finally(() => clearTimeout(timer));
};

/**
 * Asks the server to cancel the statement a pool's client is running (PostgreSQL's cancel request,
 * on a connection of its own), best effort; the client is then closed, so no later statement of
 * its can be the one cancelled. A statement given up on at its bound goes on otherwise: one waiting
 * on a lock runs when the lock frees, and its claim holds jobs nobody runs until their leases expire,
 * each an attempt spent. Closing the client's socket does not stop a backend that waits.
 */
export const cancelOnServer = (client: unknown): void => {
  const c = client as Cancellable & { constructor: new (params: unknown) => { connection?: Partial<CancelConnection> } };
  const params = c.connectionParameters;
  if (!c.processID || c.secretKey == null || !params) return;
  let done = () => {};
  try {
    const con = new c.constructor(params).connection;
    if (!con?.on || !con.connect || !con.cancel) return;
    const sent = new Promise<void>((resolve) => (done = resolve)).then(() => void sending.delete(sent));
    sending.add(sent);
    // Its own connection has no listener of a client's: a failure must not end the process.
    con.on("error", () => done());
    // The server reads the request and closes the connection.
    con.on("end", () => done());
    con.on("connect", () => con.cancel!(c.processID!, c.secretKey!));
    const host = params.host ?? "localhost";
    const port = params.port ?? 5432;
    if (host.startsWith("/")) con.connect(`${host}/.s.PGSQL.${port}`);
    else con.connect(port, host);
    // Nothing waits on it: it must not keep a process alive, nor outlive its use.
    con.stream?.unref?.();
    const timer = setTimeout(() => (con.stream?.destroy?.(), done()), CANCEL_WITHIN_MS) as { unref?(): unknown };
    timer.unref?.();
  } catch {
    // Best effort: the bound has already answered the caller.
    done();
  }
};
