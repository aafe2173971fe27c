import type { CommandSpec } from "../command.js";
import { MINUTES_JOBS } from "../../store/admin/stats.js";
import { ms, table } from "../output.js";

export const statsCommand: CommandSpec = {
  path: ["stats"],
  summary: "Queue depth, waiting time, dead letters and the last hour's counts",
  maxArgs: 0,
  async run(session) {
    const jobs = await session.jobs("none", "stats");
    const stats = await jobs.stats();
    session.print(stats, () => {
      type Row = { queued: number; running: number; waiting: number | null; dead: number; ok: number | null; failed: number | null };
      const byJob = new Map<string, Row>();
      // Counts stop at their limit: those are shown with a "+", as the dashboard shows them.
      const more = new Set<string>();
      // The minutes are the busiest jobs' of the hour (MINUTES_JOBS): when they are that many, another job's are not known ("-").
      const capped = new Set(stats.minutes.map((m) => m.job)).size >= MINUTES_JOBS;
      const row = (job: string) => {
        let r = byJob.get(job);
        if (!r) byJob.set(job, (r = { queued: 0, running: 0, waiting: null, dead: 0, ok: capped ? null : 0, failed: capped ? null : 0 }));
        return r;
      };
      for (const q of stats.queue) {
        const r = row(q.job);
        r[q.status] += q.count;
        if (q.countIsLowerBound) more.add(`${q.job}\u0000${q.status}`);
        if (q.oldestWaitingMs !== null) r.waiting = Math.max(r.waiting ?? 0, q.oldestWaitingMs);
      }
      for (const d of stats.deadLetters) {
        row(d.job).dead += d.count;
        if (d.countIsLowerBound) more.add(`${d.job}\u0000dead`);
      }
      const count = (job: string, field: "queued" | "running" | "dead", n: number) => `${n}${more.has(`${job}\u0000${field}`) ? "+" : ""}`;
      for (const m of stats.minutes) {
        const r = row(m.job);
        r.ok = (r.ok ?? 0) + m.succeeded;
        r.failed = (r.failed ?? 0) + m.failed;
      }
      const hourOf = (n: number | null) => (n === null ? "-" : String(n));
      const lines: string[] = [];
      if (byJob.size === 0) lines.push("no jobs queued, no dead letters, nothing ran in the last hour");
      else {
        const names = [...byJob.keys()].sort();
        lines.push(
          table(
            ["job", "queued", "running", "oldest due waits", "dead letters", "succeeded 1h", "failed 1h"],
            names.map((n) => {
              const r = byJob.get(n)!;
              return [n, count(n, "queued", r.queued), count(n, "running", r.running), ms(r.waiting), count(n, "dead", r.dead), hourOf(r.ok), hourOf(r.failed)];
            }),
          ),
        );
        if ([...byJob.values()].some((r) => r.ok === null)) lines.push(`("-": the last hour's counts are kept for the ${MINUTES_JOBS} busiest jobs of it)`);
      }
      lines.push("");
      lines.push(`last tick: ${stats.lastTickAt ?? "never"}`);
      const report = stats.lastReport as { claimed?: number; succeeded?: number; durationMs?: number } | null;
      if (report && stats.lastReportAt) {
        lines.push(`last tick that ran jobs: ${stats.lastReportAt} (claimed ${report.claimed ?? 0}, succeeded ${report.succeeded ?? 0}, ${ms(report.durationMs ?? 0)})`);
      }
      return lines.join("\n");
    });
  },
};
