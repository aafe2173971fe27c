import { MAX_LIMIT } from "../../store/shared/paging.js";
import type { ScheduleInfo } from "../../schedules/index.js";
import { type CommandSpec, stringOption } from "../command.js";
import { nextPage, table } from "../output.js";
import { intOption } from "../parse.js";

const NEEDS = "Needs your schedules: the jobs module (--jobs or JOBS_MODULE) exports `schedules`, as passed to createJobs.";

const describe = (s: ScheduleInfo): string =>
  [
    `${s.name}: ${s.paused ? "paused" : "active"}, ${s.description}`,
    `  job ${s.job}, cron ${JSON.stringify(s.cron)} in ${s.timezone}`,
    `  next: ${s.nextRuns.length > 0 ? s.nextRuns.join(", ") : "-"}`,
    `  last enqueued: ${s.lastEnqueuedAt ?? "never"}${s.lastJobId ? ` (job ${s.lastJobId})` : ""}`,
  ].join("\n");

const list: CommandSpec = {
  path: ["schedules", "list"],
  summary: "Schedules defined in your code, with their state and next runs",
  maxArgs: 0,
  options: {
    next: { type: "string", value: "N", description: "how many next runs to show, 0 to 100 as the API takes (default 1, a column of the table; the API's is 5; limit × next at most 5000)" },
    limit: { type: "string", value: "N", description: `at most N schedules, by name (default 50, up to ${MAX_LIMIT})` },
    cursor: { type: "string", value: "CURSOR", description: "the next page, as the previous page printed it" },
  },
  details: NEEDS,
  async run(session, _args, values) {
    const next = intOption(stringOption(values, "next"), "next", 0, 100) ?? 1;
    const jobs = await session.jobs("required", "schedules list");
    const cursor = stringOption(values, "cursor");
    const page = await jobs.schedules.list({ next, limit: intOption(stringOption(values, "limit"), "limit", 1, MAX_LIMIT), cursor });
    session.print(page, () => {
      if (page.items.length === 0) return cursor ? "no schedules on this page" : "no schedules defined (the jobs module exports no `schedules`)";
      const rows = page.items.map((s) => [s.name, s.paused ? "paused" : "active", s.job, s.cron, s.timezone, s.nextRuns.join(", ") || "-", s.lastEnqueuedAt ?? "never"]);
      const more = page.nextCursor ? `\n${nextPage("schedules list", values, page.nextCursor)}` : "";
      return `${table(["name", "state", "job", "cron", "time zone", "next run", "last enqueued"], rows)}${more}`;
    });
  },
};

const action = (verb: "pause" | "resume", summary: string): CommandSpec => ({
  path: ["schedules", verb],
  summary,
  args: "<name>",
  minArgs: 1,
  maxArgs: 1,
  details: `${NEEDS}\nExits 4 for a name your code does not define.`,
  async run(session, [name]) {
    const jobs = await session.jobs("required", `schedules ${verb}`);
    const info = await jobs.schedules[verb](name!);
    session.print(info, () => describe(info));
  },
});

const run: CommandSpec = {
  path: ["schedules", "run"],
  summary: "Enqueue one job of a schedule now (paused or not; its occurrences are unaffected)",
  args: "<name>",
  minArgs: 1,
  maxArgs: 1,
  details: `${NEEDS}\nExits 4 for a name your code does not define.`,
  async run(session, [name]) {
    const jobs = await session.jobs("required", "schedules run");
    const { id } = await jobs.schedules.run(name!);
    await session.kickDevServer();
    session.print({ id }, () => `${id} enqueued by schedule ${name}, due now`);
  },
};

export const scheduleCommands: CommandSpec[] = [
  list,
  action("pause", "Stop a schedule enqueueing occurrences (the definition stays)"),
  action("resume", "Restart a paused schedule from its next occurrence after now"),
  run,
];
