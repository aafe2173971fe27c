// The SQL of src/store as the package ships it: each line break in a template literal, with the indentation
// after it, becomes one space, and in a statement's text the spaces after a comma or an opening parenthesis
// and before a closing one go. The statements are the same to PostgreSQL, and a Worker's bundle is smaller
// with gzip. A break inside a quoted string or identifier, or ending a `--` comment, is kept.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

type Piece = ts.TemplateLiteralLikeNode;

/** Where a SQL text is at the end of a piece: in plain text, a quoted string or identifier, or a comment. */
type State = "text" | "'" | '"' | "--";

/**
 * One piece's raw text with its breaks outside strings and comments collapsed, from `state`; the state after it.
 * `tight` (a statement's text): the spaces after a comma or an opening parenthesis and before a closing one go too.
 */
const compactPiece = (raw: string, state: State, tight: boolean): [string, State] => {
  let out = "";
  const blank = (ch: string | undefined) => ch === " " || ch === "\t" || ch === "\n";
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if ((state === "text" || state === "--") && c === "\n") {
      // The indentation after the break goes too; the break itself only where it ends a comment.
      while (blank(raw[i + 1])) i++;
      out += state === "--" ? "\n" : out.endsWith(" ") || (tight && /[,(]$/.test(out)) || (tight && raw[i + 1] === ")") ? "" : " ";
      state = "text";
      continue;
    }
    if (tight && state === "text" && blank(c) && (/[,(]$/.test(out) || raw[i + 1] === ")")) continue;
    out += c;
    if (state === "text") state = c === "'" || c === '"' ? c : c === "-" && raw[i + 1] === "-" ? "--" : "text";
    else if (c === state) state = "text";
  }
  return [out, state];
};

/** A template that holds a statement's keywords (upper case, as the store writes them). */
const STATEMENT = /\b(SELECT|INSERT INTO|UPDATE|DELETE FROM|WITH|FROM|WHERE)\b/;

/** `code` (JavaScript or TypeScript) with the breaks of its template literals collapsed (see above). */
export const compactSql = (code: string, fileName = "file.js"): string => {
  const source = ts.createSourceFile(fileName, code, ts.ScriptTarget.Latest, true, fileName.endsWith(".ts") ? ts.ScriptKind.TS : ts.ScriptKind.JS);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const rewrite = (pieces: readonly Piece[]) => {
    let state: State = "text";
    // A statement, not a message: only there do the spaces after commas go (a message's words keep theirs).
    const tight = STATEMENT.test(pieces.map((p) => code.slice(p.getStart(source), p.getEnd())).join(""));
    for (const piece of pieces) {
      const start = piece.getStart(source);
      const raw = code.slice(start, piece.getEnd());
      const [text, after] = compactPiece(raw, state, tight);
      state = after;
      if (text !== raw) edits.push({ start, end: piece.getEnd(), text });
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isNoSubstitutionTemplateLiteral(node)) rewrite([node]);
    else if (ts.isTemplateExpression(node)) rewrite([node.head, ...node.templateSpans.map((s) => s.literal)]);
    ts.forEachChild(node, visit);
  };
  visit(source);
  let out = code;
  for (const e of edits.sort((a, b) => b.start - a.start)) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
};

/** Compacts every .js file under `dir` in place. */
export const compactSqlIn = (dir: string): void => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) compactSqlIn(path);
    else if (name.endsWith(".js")) writeFileSync(path, compactSql(readFileSync(path, "utf8"), path));
  }
};
