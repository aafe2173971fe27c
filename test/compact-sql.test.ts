// The package's SQL as it ships (scripts/compact-sql.ts): line breaks and indentation in template literals
// become one space, except inside quoted strings and identifiers and at the end of a `--` comment; in a
// statement, the spaces after commas and opening parentheses and before closing ones go.
import { expect, it } from "vitest";
import { compactSql } from "../scripts/compact-sql.js";

it("collapses each break and the indentation after it into one space, across placeholders", () => {
  const code = "const s = `WITH a AS (\n    SELECT ${x}\n      FROM t\n    WHERE y = ${p.add(1)}::int\n  )`;\n";
  expect(compactSql(code)).toBe("const s = `WITH a AS (SELECT ${x} FROM t WHERE y = ${p.add(1)}::int)`;\n");
});

it("keeps breaks inside a quoted string or identifier, even one that a placeholder splits, and the break ending a comment", () => {
  const code = "const s = `SELECT 'a\n  b', '%${x}\n %'\n  , \"odd\n name\" -- why\n  FROM t`;";
  expect(compactSql(code)).toBe("const s = `SELECT 'a\n  b','%${x}\n %' ,\"odd\n name\" -- why\nFROM t`;");
});

it("changes nothing outside template literals, and finds those nested in placeholders", () => {
  const code = "// a\n//   comment\nconst a = 'x';\nconst b = \"y\";\nconst c = `A\n  ${`B\n    C`}\n  D`;\n";
  expect(compactSql(code)).toBe("// a\n//   comment\nconst a = 'x';\nconst b = \"y\";\nconst c = `A ${`B C`} D`;\n");
});

it("leaves a template without breaks as it was", () => {
  const code = "export const q = (t) => `SELECT 1 FROM ${t.queue}`;";
  expect(compactSql(code)).toBe(code);
});

it("reads a .ts file as TypeScript: an angle-bracket cast is no JSX element swallowing the templates after it", () => {
  const code = "const y = <string>z;\nconst s = `SELECT a\n    FROM b`;\n";
  expect(compactSql(code, "x.ts")).toBe("const y = <string>z;\nconst s = `SELECT a FROM b`;\n");
});

it("takes out the spaces after commas and inside parentheses of a statement, never inside its quoted text, nor in a message", () => {
  const statement = "const q = `SELECT a, b FROM t WHERE x IN ( 1, ${y} ) AND y = 'a, b ( c )'`;";
  expect(compactSql(statement)).toBe("const q = `SELECT a,b FROM t WHERE x IN (1,${y}) AND y = 'a, b ( c )'`;");
  const message = "throw new E(`give { ids } or a filter { job?, reason? }: ( see ${x}, then )`);";
  expect(compactSql(message)).toBe(message);
});
