/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { Child, FC } from "hono/jsx";

/** One row of a key-value list; falsy rows are left out, so a page can list conditional ones inline. */
export type Pair = readonly [key: string, value: Child] | null | false | undefined;

/** A `<dl class="kv">`: labels on the left, values on the right. */
export const Kv: FC<{ id?: string; rows: readonly Pair[] }> = ({ id, rows }) => (
  <dl class="kv" id={id}>
    {rows.map((r) =>
      r ? (
        <>
          <dt>{r[0]}</dt>
          <dd>{r[1]}</dd>
        </>
      ) : null,
    )}
  </dl>
);

/**
 * A table column: its label, the class its cells share (`num` right-aligns), a header to show
 * instead of the label, or `hide` for a header only screen readers get.
 */
export interface Col {
  readonly l: string;
  readonly c?: string;
  readonly h?: Child;
  readonly hide?: boolean;
}

/**
 * A table in its own scrolling box. On a phone it becomes stacked rows (`.stack`), each cell
 * labelled with its column's name, so no column is cut off and the page never scrolls sideways.
 */
export const Table: FC<{ id?: string; caption?: string; cols: readonly Col[]; rows: ReadonlyArray<readonly Child[]> }> = ({ id, caption, cols, rows }) => (
  <div class="table-wrap">
    <table class="stack" id={id}>
      {caption ? <caption class="skip">{caption}</caption> : null}
      <thead>
        <tr>
          {cols.map((c) => (
            <th scope="col" class={c.c}>
              {c.hide ? <span class="skip">{c.l}</span> : (c.h ?? c.l)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr>
            {r.map((cell, i) => (
              <td class={cols[i]?.c} data-label={cols[i]?.hide ? undefined : cols[i]?.l}>
                {cell}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  </div>
);

/** A list's paging links: back to the first page when on a later one, and on to the next when there is one. */
export const Pager: FC<{ link: (cursor?: string) => string; cursor?: string; next?: string | null }> = ({ link, cursor, next }) => (
  <nav class="pager" aria-label="Pages">
    {cursor ? <a href={link()}>First page</a> : null}
    {next ? (
      <a href={link(next)} rel="next">
        Next page
      </a>
    ) : null}
  </nav>
);
