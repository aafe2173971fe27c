import { raw } from "hono/html";

/**
 * The dashboard's JSX runtime (`@jsxImportSource #jsx`): elements render at once to escaped HTML,
 * as hono `raw` strings, which `c.html` and hono/html take as they are. It keeps only what server
 * pages need (escaping, void and boolean attributes, components, fragments), about a tenth of
 * hono/jsx's bytes in a Worker; the types are hono/jsx's.
 */
export type { JSX } from "hono/jsx/jsx-runtime";

type Props = { readonly [name: string]: unknown };
type Html = ReturnType<typeof raw>;

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Attributes that are there or not (HTML's boolean attributes); any other boolean is written as its text, as aria-* wants. */
const PRESENCE = /^(?:async|autofocus|checked|defer|disabled|hidden|inert|multiple|novalidate|open|readonly|required|selected)$/;
const VOID = /^(?:area|base|br|col|embed|hr|img|input|link|meta|source|track|wbr)$/;

const isHtml = (value: unknown): value is Html => value instanceof String && (value as { isEscaped?: unknown }).isEscaped === true;

/** Children as HTML: text escaped, rendered elements as they are, null, undefined and booleans nothing. */
const html = (value: unknown): string =>
  value == null || typeof value === "boolean" ? "" : Array.isArray(value) ? value.map(html).join("") : isHtml(value) ? String(value) : escape(String(value));

const attributes = (props: Props): string => {
  let out = "";
  for (const [name, value] of Object.entries(props)) {
    if (name === "children" || value == null || typeof value === "function") continue;
    const presence = typeof value === "boolean" && PRESENCE.test(name);
    if (presence && value) out += ` ${name}=""`;
    else if (!presence) out += ` ${name}="${isHtml(value) ? String(value) : escape(String(value))}"`;
  }
  return out;
};

type Tag = string | ((props: Props) => unknown);

export const jsx = (tag: Tag, props: Props): Html => {
  if (typeof tag === "function") {
    const out = tag(props);
    return isHtml(out) ? out : raw(html(out));
  }
  const inner = html(props.children);
  return raw(VOID.test(tag) && inner === "" ? `<${tag}${attributes(props)}/>` : `<${tag}${attributes(props)}>${inner}</${tag}>`);
};

export const Fragment = (props: Props): Html => raw(html(props.children));
export { jsx as jsxs, jsx as jsxDEV };
