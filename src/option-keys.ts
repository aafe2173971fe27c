import { JobsError } from "./errors.js";

/**
 * Refuses a key `given` does not take (`invalid_options` naming it): a misspelt filter (`correlationID`)
 * would be no filter at all, and a list of every row read as the answer. The HTTP API refuses such query
 * parameters; this is the library's side. `undefined` and `null` are no options.
 */
export const onlyKeys = (given: object | undefined | null, keys: readonly string[], what: string): void => {
  if (given === undefined || given === null) return;
  if (typeof given !== "object") throw new JobsError("invalid_options", `${what} must be an object of { ${keys.join(", ")} }`);
  const unknown = Object.keys(given).find((k) => !keys.includes(k));
  if (unknown !== undefined) {
    const near = keys.find((k) => k.toLowerCase() === unknown.toLowerCase());
    throw new JobsError("invalid_options", `unknown ${what} ${JSON.stringify(unknown)}${near ? ` (did you mean ${JSON.stringify(near)}?)` : ""}: it takes ${keys.join(", ")}`, { field: unknown });
  }
};
