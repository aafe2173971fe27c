import { errorText } from "../error-text.js";
import type { Logger } from "../log.js";
import type { StepInput, StepResult } from "../store/tick/step.js";
import { operation, type Settlement } from "./settlement.js";
import { settle } from "./settler.js";

/**
 * Settlements of runs the deadline abandoned (they were requeued): each waits for the
 * tick's final statement, so the fence, not a race, decides whether it still counts.
 */
export const lateSettler = (send: (input: StepInput) => Promise<StepResult>, logger: Logger) => {
  let finalWritten!: () => void;
  const afterFinal = new Promise<void>((resolve) => (finalWritten = resolve));
  return {
    /** Called once the final statement is out (or failed). */
    finalWritten: () => finalWritten(),
    async settle(s: Settlement): Promise<void> {
      await afterFinal;
      try {
        const result = await settle(send, {}, [s], logger);
        const ok = [...result.completed, ...result.retried, ...result.deadLettered].includes(s.item.id);
        logger.log(ok ? "info" : "warn", ok ? "late settlement applied" : "lease lost", {
          jobId: s.item.id, jobName: s.run.row.job_name, attempt: s.run.row.attempt, operation: operation(s), late: true,
        });
      } catch (error) {
        logger.log("warn", "late settlement not written", { jobId: s.item.id, error: errorText(error) });
      }
    },
  };
};
