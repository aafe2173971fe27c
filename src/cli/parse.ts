import { parseDuration } from "../settings/duration.js";
import { JobsError } from "../errors.js";
import { CliError, EXIT, usageError } from "../exit-codes.js";
import { inexactIntegerProblem } from "../json-limits.js";

/** An option given a value it cannot take: the input was refused (exit 3), as the library refuses a bad value. */
export const badValue = (message: string) => new CliError(EXIT.rejected, message);

/** `--limit 20` etc.: a whole number in a range, or a refusal naming the option. */
export const intOption = (raw: string | undefined, name: string, min: number, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw badValue(`--${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
  }
  return n;
};

export const durationOption = (raw: string | undefined, name: string): number | undefined => {
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined) throw badValue(`--${name} must be a duration such as 30s, 5m or 1500 (milliseconds), got ${JSON.stringify(raw)}`);
  return ms;
};

/**
 * JSON from the command line, with the parser's complaint in the message. An integer JSON.parse would
 * round is refused as the HTTP API refuses it (a 64-bit id was stored changed).
 */
export const jsonArgument = (text: string, what: string): unknown => {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw usageError(`${what} is not valid JSON (${(e as Error).message}); quote it for the shell, e.g. '{"to":"ada@example.com"}'`);
  }
  const inexact = inexactIntegerProblem(text);
  if (inexact !== undefined) throw new JobsError("invalid_payload", `${what}: ${inexact}`);
  return value;
};
