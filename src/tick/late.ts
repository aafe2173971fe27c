import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { StepInput, StepResult } from "../store/tick/step.js";
import { operation, type Settlement } from "./settlement.js";
import { settle } from "./settler.js";

/**
 * Settlements of runs the deadline abandoned: each waits for the tick's final statement. One that
 * statement requeued (or dead-lettered) would only be fenced out, so none is sent for it; the others
 * (the final statement failed) go out while time is left (`timeLeft`), and the fence decides.
 */
export const lateSettler = (send: (input: StepInput, timeoutMs: number) => Promise<StepResult>, timeLeft: () => number, logger: Logger) => {
  let finalWritten!: (settled: ReadonlyMap<string, string>) => void;
  const afterFinal = new Promise<ReadonlyMap<string, string>>((resolve) => (finalWritten = resolve));
  return {
    /** Called once the final statement is out (or failed), with the ids it settled and how (requeued, dead-lettered). */
    finalWritten: (settled: ReadonlyMap<string, string> = new Map()) => finalWritten(settled),
    async settle(s: Settlement): Promise<void> {
      const settled = await afterFinal;
      const fields = { jobId: s.item.id, jobName: s.run.row.job_name, attempt: s.run.row.attempt, operation: operation(s), late: true };
      // Requeued (or dead-lettered) by this tick's own final statement, as its log said: the result is not the next run's.
      const how = settled.get(s.item.id);
      // A handler that ignored its abort and finished did its work, and the job runs again: its side effects twice.
      if (how) return void logger.log(s.kind === "complete" ? "warn" : "debug", `late result dropped: the run was ${how} at the tick's end`, fields);
      const timeoutMs = timeLeft();
      if (timeoutMs <= 0) return void logger.log("warn", "late settlement not written", { ...fields, error: "no time left before the platform's limit" });
      try {
        const result = await settle((input) => send(input, timeoutMs), {}, [s], logger);
        const ok = [...result.completed, ...result.retried, ...result.deadLettered].includes(s.item.id);
        logger.log(ok ? "info" : "warn", ok ? "late settlement applied" : "lease lost", fields);
      } catch (error) {
        logger.log("warn", "late settlement not written", { jobId: s.item.id, error: errorText(error) });
      }
    },
  };
};
