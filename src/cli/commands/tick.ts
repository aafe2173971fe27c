import { MAX_CONCURRENCY } from "../../settings/library.js";
import { EXIT } from "../../exit-codes.js";
import type { CommandSpec } from "../command.js";
import { stringOption } from "../command.js";
import { ms } from "../output.js";
import { badValue, durationOption, intOption } from "../parse.js";

export const tickCommand: CommandSpec = {
  path: ["tick"],
  summary: "Run one tick now, as the platform cron would, and print its report",
  maxArgs: 0,
  options: {
    budget: { type: "string", value: "DURATION", description: "how long handlers may run (default: JOBS_TICK_BUDGET, 50s)" },
    concurrency: { type: "string", value: "N", description: "handlers at once (default: JOBS_CONCURRENCY, 10)" },
  },
  details: "Needs your job handlers (--jobs or JOBS_MODULE). Ctrl-C ends the tick early: it requeues what it holds and exits 130.",
  async run(session, _args, values) {
    const budgetMs = durationOption(stringOption(values, "budget"), "budget");
    const concurrency = intOption(stringOption(values, "concurrency"), "concurrency", 1, MAX_CONCURRENCY);
    if (budgetMs !== undefined && budgetMs < 1) throw badValue("--budget must be longer than 0");
    const jobs = await session.jobs("required", "tick");
    session.ownsInterrupt = true;
    const report = await jobs.tick({ budgetMs, concurrency, signal: session.io.signal });
    session.print(report, () => {
      const parts = [
        `claimed ${report.claimed}`,
        `succeeded ${report.succeeded}`,
        `retried ${report.retried}`,
        `dead-lettered ${report.deadLettered}`,
        `requeued ${report.requeued}`,
      ];
      if (report.unstarted > 0) parts.push(`back unstarted ${report.unstarted}`);
      if (report.reclaimed > 0) parts.push(`reclaimed ${report.reclaimed}`);
      if (report.leaseLost > 0) parts.push(`lease lost ${report.leaseLost}`);
      return `tick: ${parts.join(", ")} in ${ms(report.durationMs)} (${report.statements} statements)`;
    });
    // Interrupted: the report is printed and the jobs are back in the queue, but the tick did not run to its end.
    return session.io.signal?.aborted ? EXIT.interrupted : EXIT.ok;
  },
};
