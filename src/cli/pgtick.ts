// The operator CLI's process: real stdin/stdout, Ctrl-C, and the exit code.
import { EXIT } from "../exit-codes.js";
import { runCli } from "./main.js";

const controller = new AbortController();
let interrupts = 0;
/** How long a command may take to end after the first signal (its statements are cancelled; a tick requeues what it holds). */
const SIGNAL_GRACE_MS = 5_000;
/** Exits without waiting for the command, saying so: what it left on the server is not undone. */
const giveUp = (why: string) => {
  process.stderr.write(`pgtick: ${why}; exiting without waiting for the database (what a tick was running stays claimed until its lease ends, then runs again)\n`, () =>
    process.exit(130));
};
const onSignal = () => {
  // The first Ctrl-C or SIGTERM ends a running tick cleanly (it requeues its jobs); a second one gives
  // up at once, and so does a command still going after the grace (one stuck on a database that does
  // not answer), so that a supervisor's single SIGTERM stops it.
  if (++interrupts > 1) return giveUp("interrupted again");
  controller.abort();
  setTimeout(() => giveUp(`still waiting ${SIGNAL_GRACE_MS / 1000} s after the signal`), SIGNAL_GRACE_MS).unref();
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

// A reader that stops reading (`pgtick runs list | head`) is no failure of the command: what is left to
// write is dropped, and the command ends with its own exit code, rather than with an unhandled EPIPE and a stack.
const closed = new Set<NodeJS.WriteStream>();
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    closed.add(stream);
  });
}
const write = (stream: NodeJS.WriteStream, text: string) => void (closed.has(stream) || stream.write(text));

const readStdin = async (): Promise<string> => {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
};

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => write(process.stdout, text),
  stderr: (text) => write(process.stderr, text),
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
  stdin: readStdin,
});
// Done once the command is: a tick's handlers still going when it returned were requeued and their
// late results are fenced out, so the process does not wait for them (nor for a late settle that
// could only time out on a closed pool). Output is flushed first.
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((done) => (closed.has(stream) ? done() : stream.write("", () => done())));
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
// A command whose statement Ctrl-C cancelled failed because it was interrupted (see Session).
process.exit(controller.signal.aborted && code !== EXIT.ok ? EXIT.interrupted : code);
