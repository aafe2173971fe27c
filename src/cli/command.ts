import type { ExitCode } from "../exit-codes.js";
import type { Session } from "./session.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  /** Shown in help, e.g. "NAME" for `--job NAME`. */
  readonly value?: string;
  readonly description: string;
  readonly multiple?: boolean;
}

export type Values = Record<string, string | boolean | string[] | undefined>;

export interface CommandSpec {
  /** Words that select it: ["dead-letters", "list"]. */
  readonly path: readonly string[];
  readonly summary: string;
  /** Positional arguments, e.g. "<job> <json>" (for help). */
  readonly args?: string;
  readonly minArgs?: number;
  /** Unlimited when undefined. */
  readonly maxArgs?: number;
  readonly options?: Record<string, OptionSpec>;
  /** More help text: examples, what the exit codes mean here. */
  readonly details?: string;
  readonly run: (session: Session, args: string[], values: Values) => Promise<ExitCode | void>;
}

export const stringOption = (values: Values, name: string): string | undefined => {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
};
