import { isJobsError } from "../../errors.js";
import { MAX_BULK_REPLAY } from "../../store/admin/replay-bulk.js";
import { MAX_LIMIT } from "../../store/shared/paging.js";
import { DEAD_REASONS } from "../../terms.js";
import { type CommandSpec, stringOption } from "../command.js";
import { CliError, EXIT, type ExitCode, usageError } from "../../exit-codes.js";
import { clip, nextPage, plural, table } from "../output.js";
import { intOption, jsonArgument } from "../parse.js";
import { COUNT_LIMIT } from "../../store/shared/bounded.js";
import { inert } from "../../terminal.js";

const notFound = (id: string) => new CliError(EXIT.notFound, `no dead letter with id ${id}`);

/** A replay of one id, its `not_found` said the CLI's way. */
const replayOne = async (replay: () => Promise<{ id: string }>, id: string) => {
  try {
    return await replay();
  } catch (e) {
    if (isJobsError(e) && e.code === "not_found") throw notFound(id);
    throw e;
  }
};

const list: CommandSpec = {
  path: ["dead-letters", "list"],
  summary: "Dead letters, most recent first (the start of each payload; show has it whole)",
  maxArgs: 0,
  options: {
    job: { type: "string", value: "NAME", description: "only this job" },
    reason: { type: "string", value: "REASON", description: DEAD_REASONS.join(", ") },
    limit: { type: "string", value: "N", description: `at most N (default 50, up to ${MAX_LIMIT})` },
    cursor: { type: "string", value: "CURSOR", description: "the next page, as the previous page printed it" },
  },
  async run(session, _args, values) {
    const jobs = await session.jobs("none", "dead-letters list");
    const page = await jobs.deadLetters.list({
      job: stringOption(values, "job"),
      reason: stringOption(values, "reason"),
      limit: intOption(stringOption(values, "limit"), "limit", 1, MAX_LIMIT),
      cursor: stringOption(values, "cursor"),
    });
    session.print(page, () => {
      if (page.items.length === 0) return "no dead letters";
      // Rows carry the start of each payload, not the payload: `show` prints it whole.
      const rows = page.items.map((d) => [d.id, d.job, d.reason, `${d.attempts}/${d.maxAttempts}`, d.deadAt, clip(d.payloadPreview, 40), clip(d.lastError)]);
      const more = page.nextCursor ? `\n${nextPage("dead-letters list", values, page.nextCursor)}` : "";
      return `${table(["id", "job", "reason", "attempts", "dead at", "payload", "last error"], rows)}${more}`;
    });
  },
};

const show: CommandSpec = {
  path: ["dead-letters", "show"],
  summary: "Everything about one dead letter, payload included",
  args: "<id>",
  minArgs: 1,
  maxArgs: 1,
  async run(session, [id]) {
    const jobs = await session.jobs("none", "dead-letters show");
    const dead = await jobs.deadLetters.get(id!);
    if (!dead) throw notFound(id!);
    session.print(dead, () =>
      [
        `id:              ${dead.id}`,
        `job:             ${dead.job}`,
        `reason:          ${dead.reason}`,
        `attempts:        ${dead.attempts} of ${dead.maxAttempts}`,
        `priority:        ${dead.priority}`,
        `created at:      ${dead.createdAt}`,
        `dead at:         ${dead.deadAt}`,
        `idempotency key: ${dead.idempotencyKey ?? "-"}`,
        `correlation id:  ${dead.correlationId ?? "-"}`,
        `last error:      ${dead.lastError ?? "-"}`,
        `payload:`,
        JSON.stringify(dead.payload, null, 2),
      ].join("\n"),
    );
  },
};

const replay: CommandSpec = {
  path: ["dead-letters", "replay"],
  summary: "Queue dead letters again, due now (by id, or the oldest of a job or a reason)",
  args: "[<id>...]",
  options: {
    job: { type: "string", value: "NAME", description: "replay this job's dead letters, oldest first (instead of ids)" },
    reason: { type: "string", value: "REASON", description: `replay the dead letters of this reason, oldest first (instead of ids; with --job, that job's): ${DEAD_REASONS.join(", ")}` },
    limit: { type: "string", value: "N", description: `with --job or --reason: at most N (default and maximum ${MAX_BULK_REPLAY})` },
    cursor: { type: "string", value: "CURSOR", description: "with --job or --reason: go on from where the last call stopped (it prints the cursor)" },
    payload: { type: "string", value: "JSON", description: "with one id: replay with this payload instead (checked against the job's schema)" },
  },
  details: "Exits 4 when an id is not a dead letter, 5 when a queued or running job holds its id or idempotency key (it stays a dead letter).",
  async run(session, ids, values) {
    const job = stringOption(values, "job");
    const reason = stringOption(values, "reason");
    const filtered = job !== undefined || reason !== undefined;
    const payloadText = stringOption(values, "payload");
    if (filtered && ids.length > 0) throw usageError("give dead letter ids or a filter (--job, --reason), not both");
    if (!filtered && ids.length === 0) throw usageError("give at least one dead letter id, or --job NAME or --reason REASON");
    if (payloadText !== undefined && ids.length !== 1) throw usageError("--payload replays one dead letter: give exactly one id");
    if (values.limit !== undefined && !filtered) throw usageError("--limit goes with --job or --reason");
    if (values.cursor !== undefined && !filtered) throw usageError("--cursor goes with --job or --reason");

    if (payloadText !== undefined) {
      const payload = jsonArgument(payloadText, "--payload");
      const jobs = await session.jobs("required", "replaying with an edited payload");
      const done = await replayOne(() => jobs.deadLetters.replay(ids[0]!, { payload }), ids[0]!);
      await session.kickDevServer();
      return session.print({ replayed: [done.id], skipped: [], remaining: 0, nextCursor: null }, () => `replayed ${done.id} with the edited payload`);
    }
    const jobs = await session.jobs("none", "dead-letters replay");
    if (ids.length === 1) {
      const done = await replayOne(() => jobs.deadLetters.replay(ids[0]!), ids[0]!);
      await session.kickDevServer();
      return session.print({ replayed: [done.id], skipped: [], remaining: 0, nextCursor: null }, () => `replayed ${done.id}`);
    }
    const result = await jobs.deadLetters.replayMany(
      filtered ? { job, reason, limit: intOption(stringOption(values, "limit"), "limit", 1, MAX_BULK_REPLAY), cursor: stringOption(values, "cursor") } : { ids },
    );
    if (result.replayed.length > 0) await session.kickDevServer();
    session.print(result, () => {
      const lines = [`replayed ${plural(result.replayed.length, "dead letter")}`];
      for (const s of result.skipped) {
        lines.push(
          s.reason === "conflict" ? `skipped ${s.id}: a queued or running job holds its id or idempotency key`
          : s.reason === "invalid_options" ? `skipped ${s.id}: ${s.message ?? "its job's limits refused its payload"}`
          : `skipped ${s.id}: no such dead letter`,
        );
      }
      // Counted up to a limit: at it, there may be many more.
      if (result.nextCursor !== null) {
        if (result.remaining > 0) lines.push(`${result.remaining}${result.remaining >= COUNT_LIMIT ? "+" : ""} left${job !== undefined ? ` for ${job}` : ""}${reason !== undefined ? ` (${reason})` : ""}`);
        lines.push(nextPage("dead-letters replay", values, result.nextCursor));
      }
      return lines.join("\n");
    });
    const reasons = new Set(result.skipped.map((s) => s.reason));
    return reasons.has("invalid_options") ? EXIT.rejected : reasons.has("not_found") ? EXIT.notFound : reasons.has("conflict") ? EXIT.conflict : EXIT.ok;
  },
};

const discard: CommandSpec = {
  path: ["dead-letters", "discard"],
  summary: "Delete dead letters for good",
  args: "<id>...",
  minArgs: 1,
  details: "Exits 4 when any id was not a dead letter (the others are still discarded).",
  async run(session, ids) {
    const jobs = await session.jobs("none", "dead-letters discard");
    const gone = new Set((await jobs.deadLetters.discardMany(ids)).discarded);
    const discarded = ids.filter((id) => gone.has(id.toLowerCase()));
    const missing = ids.filter((id) => !gone.has(id.toLowerCase()));
    if (session.globals.json) session.print({ discarded, missing }, () => "");
    else {
      if (discarded.length > 0) session.out(discarded.map((id) => `discarded ${id}`).join("\n"));
      for (const id of missing) session.io.stderr(`pgtick: no dead letter with id ${inert(id, false)}\n`);
    }
    const code: ExitCode = missing.length > 0 ? EXIT.notFound : EXIT.ok;
    return code;
  },
};

export const deadLetterCommands: CommandSpec[] = [list, show, replay, discard];
