import type { ScheduleInfo } from "../../schedules/index.js";
import { type CommandSpec, stringOption } from "../command.js";
import { table } from "../output.js";
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
  options: { next: { type: "string", value: "N", description: "how many next runs to show (default 1, up to 20)" } },
  details: NEEDS,
  async run(session, _args, values) {
    const next = intOption(stringOption(values, "next"), "next", 1, 20) ?? 1;
    const jobs = await session.jobs("required", "schedules list");
    const schedules = await jobs.schedules.list({ next });
    session.print(schedules, () =>
      schedules.length === 0
        ? "no schedules defined (the jobs module exports no `schedules`)"
        : table(
            ["name", "state", "job", "cron", "time zone", "next run", "last enqueued"],
            schedules.map((s) => [s.name, s.paused ? "paused" : "active", s.job, s.cron, s.timezone, s.nextRuns.join(", ") || "-", s.lastEnqueuedAt ?? "never"]),
          ),
    );
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
    session.print({ id }, () => `${id} enqueued by schedule ${name}, due now`);
  },
};

export const scheduleCommands: CommandSpec[] = [
  list,
  action("pause", "Stop a schedule enqueueing occurrences (the definition stays)"),
  action("resume", "Restart a paused schedule from its next occurrence after now"),
  run,
];
