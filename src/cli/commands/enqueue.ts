import type { EnqueueItem } from "../../enqueue.js";
import { MAX_ATTEMPTS } from "../../terms.js";
import { type CommandSpec, stringOption } from "../command.js";
import { isJobsError, JobsError } from "../../errors.js";
import { usageError } from "../../exit-codes.js";
import { durationOption, intOption, jsonArgument } from "../parse.js";

export const enqueueCommand: CommandSpec = {
  path: ["enqueue"],
  summary: "Validate a payload against the job's schema and enqueue it",
  args: "<job> <json|->",
  minArgs: 2,
  maxArgs: 2,
  options: {
    delay: { type: "string", value: "DURATION", description: "due this long from now, e.g. 30s, 5m" },
    "run-at": { type: "string", value: "ISO", description: "due at this time, e.g. 2030-01-01T09:00:00Z" },
    "idempotency-key": { type: "string", value: "KEY", description: "while a job with this key is queued or running, return that one (as runs list --idempotency-key names it)" },
    key: { type: "string", value: "KEY", description: "the same as --idempotency-key" },
    priority: { type: "string", value: "N", description: "higher runs first" },
    "max-attempts": { type: "string", value: "N", description: "attempts before it is dead-lettered" },
    "correlation-id": { type: "string", value: "ID", description: "ties the job to what caused it, in logs and the dashboard" },
    debounce: { type: "string", value: "KEY", description: "while a job of this name with this key is queued, it takes this payload and is due --delay from now" },
    "max-wait": { type: "string", value: "DURATION", description: "with --debounce: due at most this long from now, whatever later enqueues say" },
  },
  details: [
    "The payload is one JSON argument, or - to read it from stdin. Needs your job definitions (--jobs or JOBS_MODULE).",
    "Example: pgtick enqueue send-welcome '{\"email\":\"ada@example.com\",\"name\":\"Ada\"}' --delay 30s",
    "Exits 2 for JSON that does not parse, 3 for an unknown job or a payload the schema refuses.",
  ].join("\n"),
  async run(session, [job, text], values) {
    const raw = text === "-" ? await readStdin(session.io.stdin) : text!;
    const payload = jsonArgument(raw, "the payload");
    const delayMs = durationOption(stringOption(values, "delay"), "delay");
    const runAt = stringOption(values, "run-at");
    if (delayMs !== undefined && runAt !== undefined) throw usageError("give --delay or --run-at, not both");
    const [longKey, shortKey] = [stringOption(values, "idempotency-key"), stringOption(values, "key")];
    if (longKey !== undefined && shortKey !== undefined) throw usageError("give --idempotency-key or --key, not both");
    const [debounceKey, maxWaitMs] = [stringOption(values, "debounce"), durationOption(stringOption(values, "max-wait"), "max-wait")];
    if (maxWaitMs !== undefined && debounceKey === undefined) throw usageError("--max-wait goes with --debounce");
    if (debounceKey !== undefined && runAt !== undefined) throw usageError("--debounce sets when the job is due (--delay from now): give it without --run-at");
    if (debounceKey !== undefined && (longKey ?? shortKey) !== undefined) throw usageError("give --debounce or an idempotency key, not both");
    const item: EnqueueItem = {
      job: job!,
      payload,
      // With --debounce, --delay is the debounce's (the library takes no other delay beside it).
      ...(debounceKey !== undefined ? { debounce: { key: debounceKey, delayMs: delayMs ?? 0, maxWaitMs } } : { delayMs }),
      runAt,
      idempotencyKey: longKey ?? shortKey,
      priority: intOption(stringOption(values, "priority"), "priority", -2_147_483_647, 2_147_483_647),
      maxAttempts: intOption(stringOption(values, "max-attempts"), "max-attempts", 1, MAX_ATTEMPTS),
      correlationId: stringOption(values, "correlation-id"),
    };
    const jobs = await session.jobs("required", "enqueue");
    const [result] = await jobs.enqueueUnchecked([item], { batch: false }).catch((e: unknown) => {
      throw asFlag(e, { ...FLAGS, idempotencyKey: shortKey !== undefined ? "--key" : "--idempotency-key" });
    });
    // A plain number is milliseconds, as in every duration pgtick reads: said with its unit.
    const delay = stringOption(values, "delay")?.trim();
    const dueNow = (delayMs === undefined || delayMs === 0) && (runAt === undefined || Date.parse(runAt) <= Date.now());
    if (dueNow && !result!.deduplicated) await session.kickDevServer();
    const when = delayMs !== undefined ? `due in ${/^\d+(\.\d+)?$/.test(delay ?? "") ? `${delay} ms` : delay}` : runAt !== undefined ? `due at ${runAt}` : "due now";
    const { id, deduplicated, debounced } = result!;
    session.print({ id, deduplicated, ...(debounced !== undefined ? { debounced } : {}) }, () =>
      deduplicated
        ? `${id} (deduplicated: a ${job} job with key ${JSON.stringify(item.idempotencyKey)} is already queued or running)`
        : debounced
          ? `${id} debounced: the queued ${job} job with key ${JSON.stringify(debounceKey)} takes this payload, ${when}${maxWaitMs !== undefined ? " (or sooner, as a --max-wait said)" : ""}`
          : `${id} enqueued ${job}, ${when}`,
    );
  },
};

/** The enqueue options as this command's flags name them. */
const FLAGS: Record<string, string> = {
  runAt: "--run-at", delayMs: "--delay", idempotencyKey: "--idempotency-key", priority: "--priority", maxAttempts: "--max-attempts", correlationId: "--correlation-id",
  debounce: "--debounce", "debounce.key": "--debounce", "debounce.delayMs": "--delay", "debounce.maxWaitMs": "--max-wait",
};

/** An option's error said with the flag that gave it ("runAt must be ..." read as a field this command has none of). */
const asFlag = (e: unknown, flags: Record<string, string>): unknown => {
  const field = isJobsError(e) ? (e.details as { field?: unknown } | undefined)?.field : undefined;
  const flag = typeof field === "string" ? flags[field] : undefined;
  if (!flag || !isJobsError(e) || !e.message.startsWith(field as string)) return e;
  return new JobsError(e.code, `${flag}${e.message.slice((field as string).length)}`, e.details);
};

const readStdin = async (stdin: (() => Promise<string>) | undefined): Promise<string> => {
  if (!stdin) throw usageError("no stdin to read the payload from");
  // A byte order mark an editor wrote is no part of the JSON; nothing at all is said as such, not as bad quoting.
  const text = (await stdin()).replace(/^\uFEFF/, "");
  if (text.trim() === "") throw usageError("stdin held no payload: pipe one JSON value, as in echo '{}' | pgtick enqueue <job> -");
  return text;
};
