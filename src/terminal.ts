/**
 * Text bound for a terminal, made inert: control characters (C0 but tab and, where lines are kept,
 * line feed; DEL; C1) as `\u001b`-style escapes. Error texts, payloads and log messages carry what
 * whoever enqueued a job sent: raw, an escape sequence clears an operator's screen, retitles the
 * terminal or forges a log line. The escape is JSON's, so JSON output means the same after it.
 */
export const inert = (text: string, keepLines = true): string =>
  text.replace(keepLines ? /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g : /[\x00-\x08\x0a-\x1f\x7f-\x9f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
