// What Neon's SQL-over-HTTP endpoint writes, as its proxy does (neondatabase/neon,
// proxy/src/serverless/sql_over_http.rs): result objects built row by row with the
// size checked after each row, and one error body for every failure.
import type pg from "pg";

/** `sql_over_http_max_request_size_bytes` and `..._max_response_size_bytes` in proxy/src/binary/proxy.rs: 10 MiB each. */
export const NEON_MAX_REQUEST_BYTES = 10 * 1024 * 1024;
export const NEON_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** A failure the proxy reports itself (not PostgreSQL): its HTTP status and message. */
export class ProxyError extends Error {
  constructor(
    readonly status: 400 | 413 | 507,
    message: string,
  ) {
    super(message);
  }
}

export const requestTooLarge = (limit: number) => new ProxyError(413, `request is too large (max is ${limit} bytes)`);
export const responseTooLarge = (limit: number) => new ProxyError(507, `response is too large (max is ${limit} bytes)`);

const ERROR_FIELDS = [
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "severity",
  "where",
  "table",
  "column",
  "schema",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

/**
 * The proxy's one error body, every key present. A PostgreSQL error (HTTP 400)
 * fills them from the server's error fields (absent ones null); a failure of the
 * proxy itself (413, 507, an unparsable body) has `code` and `severity` empty
 * strings and the rest null, as the Rust code's `unwrap_or_default` leaves them.
 */
export const errorBody = (error: unknown): { status: number; body: Record<string, unknown> } => {
  if (error instanceof ProxyError) {
    const body: Record<string, unknown> = { message: error.message };
    for (const k of ERROR_FIELDS) body[k] = k === "code" || k === "severity" ? "" : null;
    return { status: error.status, body };
  }
  const e = error as Error & Record<string, unknown>;
  // A server's error has a severity; anything else (a lost connection) carries none of its fields.
  const fromServer = typeof e.severity === "string";
  const body: Record<string, unknown> = { message: e.message };
  for (const k of ERROR_FIELDS) body[k] = (fromServer ? e[k] : undefined) ?? (k === "code" || k === "severity" ? "" : null);
  return { status: 400, body };
};

/** The response body as it is written, with its length in bytes so far (the proxy's buffer). */
export class Output {
  private readonly parts: string[] = [];
  bytes = 0;
  constructor(private readonly max: number) {}
  push(text: string): void {
    this.parts.push(text);
    this.bytes += Buffer.byteLength(text);
  }
  /** After each row, as `write_json_rows` does: the whole buffer so far against the limit. */
  checkRow(): void {
    if (this.bytes > this.max) throw responseTooLarge(this.max);
  }
  text(): string {
    return this.parts.join("");
  }
}

/** One statement's result object, in the proxy's key order, rows as arrays of PostgreSQL text (raw text, array mode). */
export const writeResult = (out: Output, result: pg.QueryArrayResult<Array<string | null>>): void => {
  const fields = result.fields.map((f) => ({
    name: f.name,
    dataTypeID: f.dataTypeID,
    tableID: f.tableID,
    columnID: f.columnID,
    dataTypeSize: f.dataTypeSize,
    dataTypeModifier: f.dataTypeModifier,
    format: "text",
  }));
  out.push(`{"rowAsArray":true,"fields":${JSON.stringify(fields)},"rows":[`);
  result.rows.forEach((row, i) => {
    out.push(`${i > 0 ? "," : ""}${JSON.stringify(row)}`);
    out.checkRow();
  });
  out.push(`],"command":${JSON.stringify(result.command ?? "")},"rowCount":${result.rowCount ?? "null"}}`);
};
