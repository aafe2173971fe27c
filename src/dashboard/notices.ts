import { COUNT_LIMIT } from "../store/shared/bounded.js";

/** What the page says after an action redirected to it (`?done=...&n=...`): fixed texts, never echoed input. */
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

const count = (text: string | undefined) => {
  const n = Number.parseInt(text ?? "", 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
};

export const noticeFor = (done: string | undefined, n?: string, skippedText?: string, leftText?: string): string | undefined => {
  const k = count(n);
  const skipped = count(skippedText);
  const left = count(leftText);
  switch (done) {
    case "cancelled":
      return "The job was cancelled.";
    case "replayed":
      return [
        `Replayed ${plural(k, "dead letter", "dead letters")}${k > 0 ? ": queued to run now" : ""}.`,
        skipped > 0 ? `${plural(skipped, "was", "were")} not replayed: gone already, held by a live job's idempotency key, or refused by a limit's key function (its own page says why).` : "",
        // Counted up to a limit: at it, there may be many more.
        left > 0 ? `${left}${left >= COUNT_LIMIT ? "+" : ""} more match: replay again to continue.` : "",
      ].filter(Boolean).join(" ");
    case "discarded":
      return `Discarded ${plural(k, "dead letter", "dead letters")}.`;
    case "rerun":
      return "Queued a new job with the run's payload.";
    case "ran-now":
      return "The job is due now: the next tick runs it.";
    case "paused":
      return "The schedule is paused.";
    case "resumed":
      return "The schedule is running again.";
    case "ran":
      return "The schedule's job was queued to run now.";
    default:
      return undefined;
  }
};
