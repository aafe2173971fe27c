import { MAX_LIMIT } from "../../store/shared/paging.js";
import { RUN_OUTCOMES, type RunOutcome } from "../../store/runs/run-views.js";
import { type CommandSpec, stringOption } from "../command.js";
import { CliError, EXIT, usageError } from "../../exit-codes.js";
import { clip, nextPage, table } from "../output.js";
import { badValue, intOption } from "../parse.js";

const list: CommandSpec = {
  path: ["runs", "list"],
  summary: "The run history: every attempt that ended, newest first (show has its output, stack and logs)",
  maxArgs: 0,
  options: {
    job: { type: "string", value: "NAME", description: "only this job" },
    outcome: { type: "string", value: "OUTCOME", description: RUN_OUTCOMES.join(", ") },
    "job-id": { type: "string", value: "ID", description: "only this job's runs" },
    "correlation-id": { type: "string", value: "ID", description: "only runs with this correlation id" },
    "idempotency-key": { type: "string", value: "KEY", description: "only runs with this idempotency key" },
    since: { type: "string", value: "TIME", description: "finished at or after (ISO 8601)" },
    until: { type: "string", value: "TIME", description: "finished before (ISO 8601)" },
    limit: { type: "string", value: "N", description: `at most N (default 50, up to ${MAX_LIMIT})` },
    cursor: { type: "string", value: "CURSOR", description: "the next page, as the previous page printed it" },
  },
  async run(session, _args, values) {
    const outcome = stringOption(values, "outcome");
    if (outcome !== undefined && !(RUN_OUTCOMES as readonly string[]).includes(outcome)) {
      throw badValue(`--outcome must be one of ${RUN_OUTCOMES.join(", ")}`);
    }
    const jobs = await session.jobs("none", "runs list");
    const page = await jobs.runs.list({
      job: stringOption(values, "job"),
      outcome: outcome as RunOutcome | undefined,
      jobId: stringOption(values, "job-id"),
      correlationId: stringOption(values, "correlation-id"),
      idempotencyKey: stringOption(values, "idempotency-key"),
      since: stringOption(values, "since"),
      until: stringOption(values, "until"),
      limit: intOption(stringOption(values, "limit"), "limit", 1, MAX_LIMIT),
      cursor: stringOption(values, "cursor"),
    });
    session.print(page, () => {
      // A page of succeeded runs may be empty with more to read (see listRuns): the cursor says so.
      if (page.items.length === 0) return page.nextCursor ? `no runs on this page, more may follow\n${nextPage("runs list", values, page.nextCursor)}` : "no runs";
      const rows = page.items.map((r) => [r.id, r.job, r.jobId, String(r.attempt), r.outcome, r.finishedAt, r.durationMs === null ? "-" : `${r.durationMs} ms`, clip(r.error ?? "")]);
      const more = page.nextCursor ? `\n${nextPage("runs list", values, page.nextCursor)}` : "";
      return `${table(["run", "job", "job id", "attempt", "outcome", "finished at", "took", "error"], rows)}${more}`;
    });
  },
};

const show: CommandSpec = {
  path: ["runs", "show"],
  summary: "Everything the history keeps of one run: output, error, stack, log lines",
  args: "<run id>",
  minArgs: 1,
  maxArgs: 1,
  async run(session, [id]) {
    const jobs = await session.jobs("none", "runs show");
    const run = await jobs.runs.get(id!);
    if (!run) throw new CliError(EXIT.notFound, `no run with id ${id} (older than the history keeps, or never existed)`);
    session.print(run, () =>
      [
        `run:             ${run.id}`,
        `job:             ${run.job} (${run.jobId})`,
        `attempt:         ${run.attempt}${run.maxAttempts ? ` of ${run.maxAttempts}` : ""}`,
        `outcome:         ${run.outcome}`,
        `started at:      ${run.startedAt ?? "-"}`,
        `finished at:     ${run.finishedAt}`,
        `took:            ${run.durationMs === null ? "-" : `${run.durationMs} ms`}`,
        `correlation id:  ${run.correlationId ?? "-"}`,
        `idempotency key: ${run.idempotencyKey ?? "-"}`,
        `error:           ${run.error ?? "-"}`,
        ...(run.stack ? ["stack:", run.stack] : []),
        `output:${run.outputTruncated ? " (too large, not kept)" : ""}`,
        JSON.stringify(run.output, null, 2),
        `logs (${run.logs.length}):`,
        ...run.logs.map((l) => `  ${l.at} ${l.level.padEnd(5)} ${l.msg}${l.fields ? ` ${JSON.stringify(l.fields)}` : ""}`),
      ].join("\n"),
    );
  },
};

export const runCommands: CommandSpec[] = [list, show];
