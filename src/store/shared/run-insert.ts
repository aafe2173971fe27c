/** The columns of a run-history row, in the order an insert lists them. */
const RUN_COLUMNS = [
  "job_id", "job_name", "attempt", "max_attempts", "priority", "outcome", "started_at", "duration_ms", "error", "stack", "output",
  "output_truncated", "correlation_id", "idempotency_key", "created_at", "logs", "payload",
] as const;

export type RunColumn = (typeof RUN_COLUMNS)[number];

/**
 * The one insert of run-history rows, for every way a run is recorded (a tick's settlements, an
 * operator's cancel): each column's value as SQL over `from`, every column named, so a column added
 * to the history is added to each source.
 */
export const runInsert = (table: string, values: Readonly<Record<RunColumn, string>>, from: string): string =>
  `INSERT INTO ${table} (${RUN_COLUMNS.join(", ")})
    SELECT ${RUN_COLUMNS.map((c) => values[c]).join(", ")}
    FROM ${from}`;
