/**
 * Hot statements as named prepared statements (node-postgres and Neon's Pool, a fork of it, take
 * `{ name, text, values }`), planned once per connection.
 */

type Result = { rows: unknown[]; rowCount: number | null };

interface Sendable {
  query(text: string, params?: unknown[]): Promise<Result>;
}

// FNV-1a: a stable, short name for a statement text. Names are per connection in
// PostgreSQL, and the tick builds only a handful of distinct step texts.
const statementName = (text: string): string => {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `pgtick_${(h >>> 0).toString(36)}_${text.length.toString(36)}`;
};

const names = new Map<string, string>();
const nameFor = (text: string): string => {
  let name = names.get(text);
  if (name === undefined) {
    name = statementName(text);
    if (names.size > 1_000) names.clear();
    names.set(text, name);
  }
  return name;
};

/**
 * Sends a statement, named when asked and allowed. A transaction pooler that cannot keep named
 * statements (PgBouncer before 1.21) loses them (26000) or finds another client's (42P05) between
 * statements, before the server runs anything: that statement is sent again unnamed, and so is
 * every later one through this sender.
 */
export const preparedSender = (allowed: boolean) => {
  let prepare = allowed;
  return async (on: Sendable, text: string, values: unknown[], named: boolean): Promise<Result> => {
    if (!prepare || !named) return on.query(text, values);
    try {
      return await (on as unknown as { query(config: { name: string; text: string; values: unknown[] }): Promise<Result> }).query({ name: nameFor(text), text, values });
    } catch (error) {
      if (!["26000", "42P05"].includes(String((error as { code?: unknown } | null)?.code))) throw error;
      prepare = false;
      return on.query(text, values);
    }
  };
};
