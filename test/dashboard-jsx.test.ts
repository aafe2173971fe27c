// The dashboard's own JSX runtime: what its pages rely on, written as the compiled calls a .tsx file makes.
import { describe, expect, it } from "vitest";
import { raw } from "hono/html";
import { firstLine } from "../src/dashboard/format.js";
import { Fragment, jsx } from "../src/dashboard/jsx-runtime.js";

describe("a first line clipped for a list", () => {
  it("never ends in half of a surrogate pair (it showed as U+FFFD)", () => {
    expect(firstLine("ab🎉🎉", 4)).toBe("ab…");
    expect(firstLine("x🎉\nmore", 140)).toBe("x🎉");
  });
});

describe("dashboard JSX runtime", () => {
  it("escapes text and attribute values, and passes rendered HTML through once", () => {
    const inner = jsx("b", { children: `<i>&"'` });
    expect(String(jsx("p", { title: `a"b<c>&'`, children: ["x < y", inner] }))).toBe(
      `<p title="a&quot;b&lt;c&gt;&amp;&#39;">x &lt; y<b>&lt;i&gt;&amp;&quot;&#39;</b></p>`,
    );
    expect(String(jsx("div", { children: raw("<!doctype html>") }))).toBe("<div><!doctype html></div>");
  });

  it("writes boolean attributes as present or absent, other booleans as text, and leaves out null, undefined and functions", () => {
    expect(String(jsx("input", { type: "checkbox", checked: true, disabled: false, "aria-hidden": true, value: undefined, name: null, onclick: () => {} }))).toBe(
      `<input type="checkbox" checked="" aria-hidden="true"/>`,
    );
    expect(String(jsx("svg", { width: 48, "aria-hidden": "false", children: [] }))).toBe(`<svg width="48" aria-hidden="false"></svg>`);
  });

  it("renders components with their props and children, fragments, numbers, and nothing for null, undefined and booleans", () => {
    const Item = (props: { readonly [k: string]: unknown }) => jsx("li", { children: [props.label as string, props.children] });
    const list = jsx("ul", { children: [jsx(Item, { label: "a", children: 1 }), null, undefined, false, true, jsx(Fragment, { children: [jsx(Item, { label: "b" }), 0] })] });
    expect(String(list)).toBe("<ul><li>a1</li><li>b</li>0</ul>");
  });
});
