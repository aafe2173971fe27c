// Reading the source's imports and checking them against a layout's rules, for test/layout.test.ts
// (which holds the rules themselves, mirrored in ARCHITECTURE.md). No database, no bundler: the
// TypeScript parser reads every file under src/ and functions/, and type-only imports are told apart.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

export interface Rule {
  /** Targets this unit may import (values or types). */
  readonly imports: readonly string[];
  /** Targets it may import types from, and nothing else (erased from every bundle). */
  readonly types?: readonly string[];
}

export interface Exception {
  readonly from: string;
  readonly to: string;
  /** For the constants rule: the names imported. */
  readonly names?: readonly string[];
  readonly why: string;
}

export interface EntryRule {
  readonly entry: string;
  /** The package.json `imports` condition the bundler uses for this entry. */
  readonly condition: "default" | "workerd";
  /** With `only`, every file it reaches starts with one of these; with `never`, none does. */
  readonly only?: readonly string[];
  readonly never?: readonly string[];
  readonly packages: readonly string[];
}

export interface LayoutRules {
  /** Group name -> members; a group name in a rule stands for its members. */
  readonly groups: Record<string, readonly string[]>;
  /** Unit -> what it may import. */
  readonly rules: Record<string, Rule>;
  /** Edges the folder table forbids that are the design. */
  readonly seams: readonly Exception[];
  /** Edges that break a rule today, to be fixed. */
  readonly violations: readonly Exception[];
  /** Units that reach the store for types and constants only. */
  readonly presentation: readonly string[];
  /** Package ("node:" for the built-ins) -> the units that may import it. */
  readonly packages: Record<string, readonly string[]>;
  /** Files (src-relative) outside src/store that hold SQL today, to be moved. */
  readonly sqlViolations: readonly string[];
}

// Reading the source.

export interface Import {
  readonly spec: string;
  /** Erased by TypeScript: `import type`, `export type`, or every named binding marked `type`. */
  readonly typeOnly: boolean;
  /** The runtime names it takes ("default", "*" for a namespace, a re-export of all or a dynamic import). */
  readonly names: readonly string[];
  readonly line: number;
}

export interface Edge extends Import {
  /** Repository-relative paths. */
  readonly from: string;
  /** A repository-relative file, `pkg:<spec>` for a package, or `?<path>` when it does not resolve. */
  readonly to: string;
}

export interface Graph {
  readonly root: string;
  /** Repository-relative paths of every source file under src/ and functions/. */
  readonly files: readonly string[];
  readonly edges: readonly Edge[];
  readonly exports: Record<string, string>;
  readonly migrations: Record<string, string>;
}

const CODE = /\.(ts|tsx|mts|mjs)$/;

export const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // functions/vercel/dist is build output (git-ignored).
    if (name === "node_modules" || name === "dist") return [];
    return statSync(path).isDirectory() ? walk(path) : [path];
  });

const importsOf = (path: string, text: string): Import[] => {
  const kind = path.endsWith(".tsx") ? ts.ScriptKind.TSX : path.endsWith(".mjs") ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found: Import[] = [];
  const line = (n: ts.Node) => source.getLineAndCharacterOfPosition(n.getStart(source)).line + 1;
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) && ts.isStringLiteral(n.moduleSpecifier)) {
      const clause = n.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const names = [
        ...(clause?.name ? ["default"] : []),
        ...(clause?.namedBindings && ts.isNamespaceImport(clause.namedBindings) ? ["*"] : []),
        ...(named ?? []).filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text),
      ];
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && names.length === 0));
      found.push({ spec: n.moduleSpecifier.text, typeOnly, names: typeOnly ? [] : names, line: line(n) });
    } else if (ts.isExportDeclaration(n) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      const named = n.exportClause && ts.isNamedExports(n.exportClause) ? n.exportClause.elements : undefined;
      const names = named ? named.filter((e) => !e.isTypeOnly).map((e) => (e.propertyName ?? e.name).text) : ["*"];
      const typeOnly = n.isTypeOnly || (!!named && named.length > 0 && names.length === 0);
      found.push({ spec: n.moduleSpecifier.text, typeOnly, names: typeOnly ? [] : names, line: line(n) });
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments[0] && ts.isStringLiteralLike(n.arguments[0])) {
      found.push({ spec: n.arguments[0].text, typeOnly: false, names: ["*"], line: line(n) });
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      found.push({ spec: n.argument.literal.text, typeOnly: true, names: [], line: line(n) });
    }
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
};

/** Where a specifier leads: files (`#migrations` leads to every file of its conditions), a package, or `?`. */
const resolveSpec = (root: string, from: string, spec: string, migrations: Record<string, string>): string[] => {
  if (spec.startsWith("#")) return spec === "#migrations" ? Object.values(migrations) : [`?${spec}`];
  if (!spec.startsWith(".")) return [`pkg:${spec}`];
  const base = resolve(root, dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, ".ts"), base.replace(/\.js$/, ".tsx"), base]) {
    try {
      if (statSync(candidate).isFile()) return [relative(root, candidate)];
    } catch {
      // not this one
    }
  }
  return [`?${relative(root, base)}`];
};

export const readGraph = (root: string): Graph => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports?: Record<string, string | Record<string, string>>;
    imports?: Record<string, Record<string, string>>;
  };
  const strip = (p: string) => p.replace(/^\.\//, "");
  // An entry point's source: its "pgtick-source" target (the others are the compiled dist/ that apps get).
  const source = (target: string | Record<string, string>) => (typeof target === "string" ? target : target["pgtick-source"] ?? "");
  const exports = Object.fromEntries(Object.entries(pkg.exports ?? {}).filter(([k]) => k !== "./package.json").map(([k, v]) => [k === "." ? "pgtick" : `pgtick/${k.slice(2)}`, strip(source(v))]));
  const migrations = Object.fromEntries(Object.entries(pkg.imports?.["#migrations"] ?? {}).map(([k, v]) => [k, strip(v)]));
  const files = ["src", "functions"].flatMap((d) => walk(join(root, d))).map((f) => relative(root, f)).filter((f) => CODE.test(f)).sort();
  const edges = files.flatMap((from) =>
    importsOf(from, readFileSync(join(root, from), "utf8")).flatMap((imp) => resolveSpec(root, from, imp.spec, migrations).map((to) => ({ ...imp, from, to }))),
  );
  return { root, files, edges, exports, migrations };
};

// The checks: each returns what breaks its rule, one line per offence.

export const inSrc = (path: string) => path.replace(/^src\//, "");

export const unitOf = (path: string): string => {
  if (path.startsWith("functions/")) return "functions";
  const parts = inSrc(path).split("/");
  if (parts.length === 1) return parts[0]!;
  return parts[0] === "store" && parts.length > 2 ? `store/${parts[1]}` : parts[0]!;
};

const expand = (r: LayoutRules, targets: readonly string[] = []) => targets.flatMap((t) => r.groups[t] ?? [t]);
const matches = (r: LayoutRules, targets: readonly string[], file: string) => expand(r, targets).some((t) => t === unitOf(file) || t === inSrc(file));
const isException = (list: readonly Exception[], e: Edge) => list.some((x) => x.from === inSrc(e.from) && x.to === inSrc(e.to));

export const packageOf = (spec: string) => (spec.startsWith("node:") ? "node:" : spec.split("/").slice(0, spec.startsWith("@") ? 2 : 1).join("/"));

/** Imports between units that the table does not allow (and that are not a seam or a known violation). */
export const edgeViolations = (r: LayoutRules, g: Graph): string[] =>
  g.edges.flatMap((e) => {
    if (e.to.startsWith("?")) return [`${e.from}:${e.line} imports ${e.spec}, which does not resolve`];
    if (e.to.startsWith("pkg:") || unitOf(e.from) === unitOf(e.to)) return [];
    const from = unitOf(e.from);
    const rule = r.rules[from];
    if (!rule) return [`${e.from}: unit ${from} has no rule in the table`];
    const allowed = matches(r, rule.imports, e.to) || (e.typeOnly && matches(r, rule.types ?? [], e.to));
    if (allowed || isException(r.seams, e) || isException(r.violations, e)) return [];
    const typesOk = !e.typeOnly && matches(r, rule.types ?? [], e.to);
    return [`${e.from}:${e.line} imports ${e.to} (${from} -> ${unitOf(e.to)}${typesOk ? ": types only" : " is not in the table"})`];
  });

const CONSTANT = /^[A-Z][A-Z0-9_]*$/;

/** Runtime imports of the store by presentation units that are not constants. */
export const storeNameViolations = (r: LayoutRules, g: Graph): string[] =>
  g.edges.flatMap((e) => {
    if (e.typeOnly || !r.presentation.includes(unitOf(e.from)) || !e.to.startsWith("src/store/")) return [];
    const known = r.violations.find((x) => x.from === inSrc(e.from) && x.to === inSrc(e.to) && x.names);
    const bad = e.names.filter((n) => !CONSTANT.test(n) && !known?.names?.includes(n));
    return bad.length > 0 ? [`${e.from}:${e.line} takes ${bad.join(", ")} from ${e.to}: the store is reached here for types and constants only`] : [];
  });

/** Packages imported by units not allowed to. */
export const packageViolations = (r: LayoutRules, g: Graph): string[] =>
  g.edges.flatMap((e) => {
    if (!e.to.startsWith("pkg:")) return [];
    const name = packageOf(e.spec);
    const units = r.packages[name];
    if (!units) return [`${e.from}:${e.line} imports ${e.spec}: ${name} is not in the package table`];
    return units.includes(unitOf(e.from)) ? [] : [`${e.from}:${e.line} imports ${e.spec}: ${name} is for ${units.join(", ")} only`];
  });

/** functions/ reach the project only through package entry points, never by a path. */
export const functionsViolations = (g: Graph): string[] =>
  g.edges.flatMap((e) => {
    if (!e.from.startsWith("functions/")) return [];
    if (e.to.startsWith("pkg:")) {
      const project = e.spec === "pgtick" || e.spec.startsWith("pgtick/");
      return project && !(e.spec in g.exports) ? [`${e.from}:${e.line} imports ${e.spec}: not an entry point of package.json exports`] : [];
    }
    return e.to.startsWith("functions/") ? [] : [`${e.from}:${e.line} imports ${e.spec}: functions/ use "pgtick/..." entry points, never a path out of functions/`];
  });

/** Only the migrator takes the migrations, and only through `#migrations` (so the Worker gets none). */
export const migrationViolations = (g: Graph): string[] =>
  g.edges.flatMap((e) => {
    const shipped = Object.values(g.migrations).includes(e.to);
    if (!shipped || e.typeOnly) return [];
    if (e.spec !== "#migrations") return [`${e.from}:${e.line} imports ${e.to} by path: use #migrations, whose workerd condition keeps the SQL out of the Worker`];
    return inSrc(e.from) === "migrate.ts" ? [] : [`${e.from}:${e.line} imports #migrations: only src/migrate.ts does`];
  });

export const lineCount = (text: string) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);

/** Every file under src/ over `maxLines`, longest first. */
export const longFiles = (root: string, maxLines: number): string[] =>
  walk(join(root, "src"))
    .map((f) => ({ file: relative(root, f), lines: lineCount(readFileSync(f, "utf8")) }))
    .filter((f) => f.lines > maxLines)
    .sort((a, b) => b.lines - a.lines)
    .map((f) => `${f.file}: ${f.lines} lines (at most ${maxLines})`);

/** Doc comments stacked on one declaration: editors and the built .d.ts show only the last, so the first is lost. */
export const stackedDocComments = (root: string): string[] =>
  walk(join(root, "src")).flatMap((f) => {
    const lines = readFileSync(f, "utf8").split("\n");
    // Pragmas (/** @jsxRuntime automatic */) are no doc comments.
    const doc = (line: string | undefined) => /^\s*\/\*\*(?!\s*@jsx)/.test(line ?? "");
    return lines.flatMap((line, i) => (/\*\/\s*$/.test(line) && doc(lines[i + 1]) ? [`${relative(root, f)}:${i + 2}`] : []));
  });

const SQL = /\b(SELECT\s+[\w*(]|INSERT\s+INTO\b|UPDATE\s+\S+\s+(?:\w+\s+)?SET\b|DELETE\s+FROM\b|CREATE\s+(?:TABLE|INDEX|FUNCTION)\b)/;

/** Files outside src/store whose string literals hold SQL. */
export const sqlOutsideStore = (g: Graph): string[] =>
  g.files.filter((f) => f.startsWith("src/") && !f.startsWith("src/store/")).flatMap((f) => {
    const source = ts.createSourceFile(f, readFileSync(join(g.root, f), "utf8"), ts.ScriptTarget.Latest, false, f.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    let hit = false;
    const visit = (n: ts.Node): void => {
      if ((ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateLiteralToken(n)) && SQL.test(n.text)) hit = true;
      if (!hit) ts.forEachChild(n, visit);
    };
    visit(source);
    return hit ? [inSrc(f)] : [];
  });

/** The files and packages an entry point's runtime imports reach, with `condition` for `#migrations`. */
const reach = (g: Graph, entry: string, condition: string): { files: Set<string>; packages: Set<string> } => {
  const start = g.exports[entry];
  if (!start) throw new Error(`${entry} is not in package.json exports`);
  const byFile = new Map<string, Edge[]>();
  for (const e of g.edges) if (!e.typeOnly) byFile.set(e.from, [...(byFile.get(e.from) ?? []), e]);
  const files = new Set<string>();
  const packages = new Set<string>();
  const todo = [start];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const e of byFile.get(file) ?? []) {
      if (e.to.startsWith("pkg:")) packages.add(packageOf(e.spec));
      else if (e.spec === "#migrations") todo.push(g.migrations[condition] ?? g.migrations.default!);
      else todo.push(e.to);
    }
  }
  return { files, packages };
};

export const entryViolations = (g: Graph, rule: EntryRule): string[] => {
  const { files, packages } = reach(g, rule.entry, rule.condition);
  const starts = (f: string, prefixes: readonly string[]) => prefixes.some((p) => f.startsWith(p));
  return [
    ...[...files].filter((f) => (rule.only && !starts(f, rule.only)) || (rule.never && starts(f, rule.never))).map((f) => `${rule.entry} pulls in ${f}`),
    ...[...packages].filter((p) => !rule.packages.includes(p)).map((p) => `${rule.entry} pulls in the package ${p}`),
  ];
};

/** Seams and known violations that no import needs any more: remove them (and their lines in ARCHITECTURE.md). */
export const staleExceptions = (r: LayoutRules, g: Graph): string[] => {
  const used = (x: Exception) => g.edges.some((e) => inSrc(e.from) === x.from && inSrc(e.to) === x.to);
  const sql = sqlOutsideStore(g);
  return [
    ...[...r.seams, ...r.violations].filter((x) => !used(x)).map((x) => `${x.from} -> ${x.to}`),
    ...r.sqlViolations.filter((f) => !sql.includes(f)).map((f) => `${f} holds no SQL`),
  ];
};

