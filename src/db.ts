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

export interface Db {
  query<R = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

/**
 * Anything with a node-postgres style `query(text, params)`: a `pg` Pool,
 * Client or PoolClient (inside the caller's transaction), or a Neon `Pool` /
 * `Client`. The shape is structural, so no driver is imported here.
 */
export interface PgLike {
  query(text: string, params?: unknown[]): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

export const fromPg = (client: PgLike): Db => ({
  async query<R>(text: string, params: readonly unknown[] = []) {
    const result = await client.query(text, params as unknown[]);
    return { rows: result.rows as R[], rowCount: result.rowCount ?? result.rows.length };
  },
});

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
    query<R>(text: string, params?: readonly unknown[]) {
      counted.statements++;
      return db.query<R>(text, params);
    },
  };
  return counted;
};
