/**
 * The narrow database interface the library needs: run one statement with
 * positional parameters. Every state transition is a single statement, so no
 * adapter needs interactive transactions; that is what lets the same code run
 * over node-postgres, Neon's WebSocket Pool and Neon's HTTP `neon()`.
 */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly rowCount: number;
}

export interface QueryOptions {
  /**
   * Marks a hot statement (the tick's steps) for the server to plan once per
   * connection. Drivers that cannot prepare (Neon's HTTP driver) ignore it.
   */
  readonly prepare?: boolean;
}

export interface Db {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<QueryResult<R>>;
}

/**
 * Anything with a node-postgres style `query(text, params)`: a `pg` Pool,
 * Client or PoolClient (inside the caller's transaction), or a Neon `Pool` /
 * `Client`. The shape is structural, so no driver is imported here.
 */
export interface PgLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/** node-postgres (and Neon's Pool, a fork of it) also take `{ name, text, values }`: a named prepared statement. */
interface PgPreparing {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
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
 * Wraps a driver (or another `Db`) as a `Db`. A node-postgres or Neon Pool/Client
 * (recognised by its `connect`) runs hot statements as named prepared statements;
 * anything else gets the options passed through.
 */
export const fromPg = (client: PgLike | Db, adapter: { prepare?: boolean } = {}): Db => {
  const driver = typeof (client as { connect?: unknown }).connect === "function";
  // `prepare: false` for a pooler that cannot keep named statements (PgBouncer before 1.21 in transaction mode).
  const prepare = adapter.prepare ?? true;
  return {
    async query<R>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
      const result = !driver
        ? await (client as Db).query(text, params, options)
        : prepare && options?.prepare
          ? await (client as unknown as PgPreparing).query({ name: nameFor(text), text, values: params as unknown[] })
          : await client.query(text, params as unknown[]);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
    },
  };
};

/** Neon's HTTP query function (`neon(url)`): one HTTP round trip per statement. */
export interface NeonHttpLike {
  query(text: string, params?: unknown[], opts?: { fullResults: true }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export const fromNeonHttp = (sql: NeonHttpLike): Db => ({
  async query<R>(text: string, params: readonly unknown[] = []) {
    const result = await sql.query(text, params as unknown[], { fullResults: true });
    return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
  },
});

/** Counts statements, for the benchmark and for tests that check a tick's cost. */
export const countingDb = (db: Db): Db & { statements: number } => {
  const counted = {
    statements: 0,
    query<R>(text: string, params?: readonly unknown[], options?: QueryOptions) {
      counted.statements++;
      return db.query<R>(text, params, options);
    },
  };
  return counted;
};
