import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { CommandSpec, OptionSpec, Values } from "./command.js";
import { deadLetterCommands } from "./commands/dead-letters.js";
import { enqueueCommand } from "./commands/enqueue.js";
import { migrateCommand } from "./commands/migrate.js";
import { jobCommands } from "./commands/jobs.js";
import { runCommands } from "./commands/runs.js";
import { scheduleCommands } from "./commands/schedules.js";
import { statsCommand } from "./commands/stats.js";
import { tickCommand } from "./commands/tick.js";
import { type CliIo, Session } from "./session.js";
import { unknownVariables } from "../settings/catalog.js";
import { EVERY_VAR } from "../settings/dev-catalog.js";
import { inert } from "../terminal.js";
import { CliError, EXIT, type ExitCode, exitCodeFor, oneLine, usageError } from "../exit-codes.js";

const COMMANDS: readonly CommandSpec[] = [migrateCommand, tickCommand, enqueueCommand, ...jobCommands, ...deadLetterCommands, ...runCommands, ...scheduleCommands, statsCommand];

const GLOBAL: Record<string, OptionSpec & { short?: string }> = {
  jobs: { type: "string", value: "FILE", description: "your jobs module (exports `jobs`, optional `schedules`); default: JOBS_MODULE, else functions/jobs.ts when present" },
  json: { type: "boolean", description: "print JSON for scripts" },
  verbose: { type: "boolean", description: "debug logs, and stack traces on errors" },
  help: { type: "boolean", short: "h", description: "show help" },
  version: { type: "boolean", description: "print pgtick's version" },
};

/** The installed package's version: package.json is two folders up from src/cli/ and from dist/cli/ alike. */
const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

const EXIT_HELP =
  "Exit codes: 0 ok, 1 failed, 2 bad command line, 3 input refused (unknown job, invalid payload), 4 not found, " +
  "5 conflict, 6 configuration (DATABASE_URL, jobs module, tables missing), 7 database unreachable, 130 interrupted.";

const optionLines = (options: Record<string, OptionSpec & { short?: string }>): string[] => {
  const entries = Object.entries(options).map(([name, o]) => [`${o.short ? `-${o.short}, ` : ""}--${name}${o.value ? ` ${o.value}` : ""}`, o.description] as const);
  const width = Math.max(0, ...entries.map(([flag]) => flag.length));
  return entries.map(([flag, text]) => `  ${flag.padEnd(width)}  ${text}`);
};

const commandLines = (specs: readonly CommandSpec[]): string[] => {
  const entries = specs.map((s) => [`${s.path.join(" ")}${s.args ? ` ${s.args}` : ""}`, s.summary] as const);
  const width = Math.max(...entries.map(([u]) => u.length));
  return entries.map(([u, text]) => `  ${u.padEnd(width)}  ${text}`);
};

const mainHelp = (): string =>
  [
    "pgtick: operate a pgtick job queue on PostgreSQL.",
    "",
    "Usage: pgtick <command> [options]",
    "",
    "Commands:",
    ...commandLines(COMMANDS),
    "",
    "Options for every command:",
    ...optionLines(GLOBAL),
    "",
    "The database is DATABASE_URL (or, unset, the database of `npm run dev` running in this folder).",
    "Settings come from JOBS_* variables, e.g. JOBS_TABLE_PREFIX.",
    EXIT_HELP,
    "",
    "Run `pgtick <command> --help` for a command's options.",
  ].join("\n");

const groupHelp = (group: string): string =>
  [`Usage: pgtick ${group} <command> [options]`, "", "Commands:", ...commandLines(COMMANDS.filter((c) => c.path[0] === group)), "", "Run `pgtick " + group + " <command> --help` for its options."].join("\n");

const commandHelp = (spec: CommandSpec): string =>
  [
    `Usage: pgtick ${spec.path.join(" ")}${spec.args ? ` ${spec.args}` : ""}${spec.options ? " [options]" : ""}`,
    "",
    spec.summary,
    ...(spec.details ? ["", spec.details] : []),
    "",
    "Options:",
    ...optionLines({ ...spec.options, ...GLOBAL }),
    "",
    EXIT_HELP,
  ].join("\n");

const parseOptions = (specs: Record<string, OptionSpec & { short?: string }>) =>
  Object.fromEntries(
    Object.entries(specs).map(([name, o]) => [name, { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) }]),
  ) as Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }>;

/** Node's parseArgs messages, shortened to what the operator typed wrong. */
const argsError = (e: unknown): CliError => {
  const code = (e as { code?: string }).code;
  const message = e instanceof Error ? e.message : String(e);
  const quoted = /'([^']+)'/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return usageError(`unknown option ${quoted ?? message}`);
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const option = quoted?.split(" ")[0] ?? "";
    if (/does not take an argument/.test(message)) return usageError(`option ${option} takes no value`);
    // Node reads "--priority -5" as an option with its value missing: a value starting with "-" takes "=".
    const dash = /starting with a dash/.test(message) ? `; a value starting with "-" is written ${option}=-5` : "";
    return usageError(`option ${option} needs a value${dash}`.replace("  ", " "));
  }
  return usageError(message.split("\n")[0]!);
};

const findCommand = (words: readonly string[]): CommandSpec | undefined =>
  COMMANDS.filter((c) => c.path.every((w, i) => words[i] === w)).sort((a, b) => b.path.length - a.path.length)[0];

/**
 * Runs one CLI invocation and returns its exit code. Everything the operator
 * sees goes through `io`: results to stdout, one-line errors to stderr.
 */
export const runCli = async (argv: readonly string[], io: CliIo): Promise<ExitCode> => {
  const fail = (e: unknown, verbose: boolean): ExitCode => {
    io.stderr(`pgtick: ${inert(oneLine(e), false)}\n`);
    if (verbose && e instanceof Error && e.stack && !(e instanceof CliError)) io.stderr(`${inert(e.stack)}\n`);
    return exitCodeFor(e);
  };
  // First pass, loosely: which command is it? Its own options are known only after that.
  const loose = parseArgs({ args: [...argv], options: parseOptions(GLOBAL), strict: false, allowPositionals: true, tokens: true });
  const verbose = loose.values.verbose === true;
  const words = loose.positionals;
  if (loose.values.version === true) return io.stdout(`pgtick ${packageVersion()}\n`), EXIT.ok;
  if (words.length === 0) {
    if (loose.values.help === true) return io.stdout(`${mainHelp()}\n`), EXIT.ok;
    // An option alone that pgtick does not know (-v for --version, say): named, not only the help shown.
    const stray = loose.tokens?.find((t) => t.kind === "option" && !(t.name in GLOBAL));
    if (stray && stray.kind === "option") return fail(usageError(`unknown option ${stray.rawName}; run \`pgtick --help\` for the commands`), verbose);
    io.stderr(`${mainHelp()}\n`);
    return EXIT.usage;
  }
  const spec = findCommand(words);
  if (!spec) {
    const group = COMMANDS.some((c) => c.path.length > 1 && c.path[0] === words[0]) ? words[0]! : undefined;
    if (group && (words.length === 1 || loose.values.help === true)) {
      if (loose.values.help === true) return io.stdout(`${groupHelp(group)}\n`), EXIT.ok;
      io.stderr(`${groupHelp(group)}\n`);
      return EXIT.usage;
    }
    const what = group ? `${group} command ${JSON.stringify(words[1])}` : `command ${JSON.stringify(words[0])}`;
    return fail(usageError(`unknown ${what}; run \`pgtick ${group ?? ""}${group ? " " : ""}--help\` for the list`), verbose);
  }

  let values: Values;
  let args: string[];
  try {
    const options = { ...GLOBAL, ...spec.options };
    const parsed = parseArgs({ args: [...argv], options: parseOptions(options), strict: true, allowPositionals: true, tokens: true });
    // An option given twice kept its last value without a word (--priority 1 --priority 2).
    const given = parsed.tokens.flatMap((t) => (t.kind === "option" && !(options as Record<string, OptionSpec>)[t.name]?.multiple ? [t.name] : []));
    const twice = given.find((name, i) => given.indexOf(name) !== i);
    if (twice !== undefined) throw usageError(`option --${twice} is given more than once`);
    values = parsed.values as Values;
    args = parsed.positionals.slice(spec.path.length);
  } catch (e) {
    return fail(argsError(e), verbose);
  }
  if (values.help === true) return io.stdout(`${commandHelp(spec)}\n`), EXIT.ok;
  const usage = `usage: pgtick ${spec.path.join(" ")}${spec.args ? ` ${spec.args}` : ""}`;
  if (args.length < (spec.minArgs ?? 0)) return fail(usageError(`missing argument; ${usage}`), verbose);
  if (spec.maxArgs !== undefined && args.length > spec.maxArgs) {
    return fail(usageError(`unexpected argument ${JSON.stringify(args[spec.maxArgs])}; ${usage}`), verbose);
  }

  // A misspelt variable (JOBS_CONCURENCY) would otherwise be ignored without a word.
  for (const name of unknownVariables(io.env, EVERY_VAR)) io.stderr(`pgtick: warning: ${name} is no setting pgtick knows; it is ignored (see the README's settings tables)\n`);
  const session = new Session(io, { json: values.json === true, verbose, jobs: typeof values.jobs === "string" ? values.jobs : undefined });
  try {
    return (await spec.run(session, args, values)) ?? EXIT.ok;
  } catch (e) {
    return fail(e, verbose);
  } finally {
    await session.close().catch(() => {});
  }
};
