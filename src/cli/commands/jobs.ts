import type { WaitingOn } from "../../flow/waiting.js";
import { MAX_LIMIT } from "../../store/shared/paging.js";
import { type CommandSpec, stringOption } from "../command.js";
import { CliError, EXIT } from "../../exit-codes.js";
import { clip, nextPage, table } from "../output.js";
import { badValue, intOption } from "../parse.js";

const STATUSES = ["queued", "running"] as const;

const waiting = (w: WaitingOn): string =>
  w.kind === "concurrency"
    ? `its concurrency limit of ${w.limit} for key ${w.key} (${w.running} running)`
    : `its rate limit of ${w.limit} per ${w.periodMs} ms for key ${w.key}${w.group ? ` (group ${w.group})` : ""} (${w.starts} started)`;

const list: CommandSpec = {
  path: ["jobs", "list"],
  summary: "Queued and running jobs, newest first (the start of each payload; show has it whole)",
  maxArgs: 0,
  options: {
    job: { type: "string", value: "NAME", description: "only this job" },
    status: { type: "string", value: "STATUS", description: STATUSES.join(" or ") },
    limit: { type: "string", value: "N", description: `at most N (default 50, up to ${MAX_LIMIT})` },
    cursor: { type: "string", value: "CURSOR", description: "the next page, as the previous page printed it" },
  },
  async run(session, _args, values) {
    const status = stringOption(values, "status");
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw badValue(`--status must be ${STATUSES.join(" or ")}`);
    const jobs = await session.jobs("none", "jobs list");
    const page = await jobs.list({
      job: stringOption(values, "job"),
      status: status as (typeof STATUSES)[number] | undefined,
      limit: intOption(stringOption(values, "limit"), "limit", 1, MAX_LIMIT),
      cursor: stringOption(values, "cursor"),
    });
    session.print(page, () => {
      if (page.items.length === 0) return "no jobs";
      const rows = page.items.map((j) => [j.id, j.job, j.status, j.runAt, `${j.attempt}/${j.maxAttempts}`, clip(j.payloadPreview, 40), clip(j.lastError)]);
      const more = page.nextCursor ? `\n${nextPage("jobs list", values, page.nextCursor)}` : "";
      return `${table(["id", "job", "status", "due at", "attempts", "payload", "last error"], rows)}${more}`;
    });
  },
};

const show: CommandSpec = {
  path: ["jobs", "show"],
  summary: "One job, wherever it is now: queued, running, dead, succeeded or cancelled, with its payload and ended attempts",
  args: "<id>",
  minArgs: 1,
  maxArgs: 1,
  async run(session, [id]) {
    const jobs = await session.jobs("none", "jobs show");
    const job = await jobs.get(id!);
    if (!job) throw new CliError(EXIT.notFound, `no job with id ${id} (never enqueued, or older than the run history keeps)`);
    session.print(job, () =>
      [
        `id:              ${job.id}`,
        `job:             ${job.job}`,
        `status:          ${job.status}${job.reason ? ` (${job.reason})` : ""}`,
        `due at:          ${job.runAt ?? "-"}`,
        `attempt:         ${job.attempt}${job.maxAttempts ? ` of ${job.maxAttempts}` : ""}`,
        `created at:      ${job.createdAt}`,
        ...(job.finishedAt ? [`finished at:     ${job.finishedAt}`] : []),
        ...(job.waitingOn ? [`waiting on:      ${waiting(job.waitingOn)}`] : []),
        `idempotency key: ${job.idempotencyKey ?? "-"}`,
        `correlation id:  ${job.correlationId ?? "-"}`,
        `last error:      ${job.lastError ?? "-"}`,
        `payload:`,
        JSON.stringify(job.payload, null, 2),
        ...(job.status === "succeeded" ? [`output:${job.outputTruncated ? " (too large, not kept)" : ""}`, JSON.stringify(job.output ?? null, null, 2)] : []),
        `attempts (${job.attempts?.length ?? 0}):`,
        ...(job.attempts ?? []).map((r) => `  ${r.attempt} ${r.outcome.padEnd(13)} ${r.finishedAt} run ${r.id}${r.error ? ` ${clip(r.error)}` : ""}`),
      ].join("\n"),
    );
  },
};

/** `cancel` and `run`: one call on one queued job; not_found exits 4, conflict (it runs) 5. */
const act = (verb: "cancel" | "run", summary: string): CommandSpec => ({
  path: ["jobs", verb],
  summary,
  args: "<id>",
  minArgs: 1,
  maxArgs: 1,
  details: "Exits 4 when no queued or running job has the id, 5 while it runs (its tick owns it).",
  async run(session, [id]) {
    const jobs = await session.jobs("none", `jobs ${verb}`);
    if (verb === "cancel") {
      const done = await jobs.cancel(id!);
      return session.print(done, () => `cancelled ${done.id}`);
    }
    const done = await jobs.run(id!);
    if (done.moved) await session.kickDevServer();
    session.print(done, () => (done.moved ? `${done.id} is due now` : `${done.id} was due already (at ${done.runAt}): it keeps its place`));
  },
});

export const jobCommands: CommandSpec[] = [
  list,
  show,
  act("cancel", "Delete a queued job (a cancelled job is kept in the run history)"),
  act("run", "Make a queued job due now (delayed, backing off or debounced)"),
];
