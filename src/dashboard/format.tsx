/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import { storableText } from "../error-text.js";
import type { FC } from "hono/jsx";

/** `2025-05-01 12:00:03 UTC`: one unambiguous zone for every operator. */
export const utc = (iso: string | null | undefined): string =>
  iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC` : "—";

/** A duration in words a person reads at a glance: `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export const span = (ms: number): string => {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
};

/** A duration for axes and percentiles: `250 ms`, `2.5 s`, `30 s`, `5 min`, `2 h`, `3 d`. */
export const dur = (ms: number): string => {
  const r = (n: number, u: string) => `${Math.round(n * 10) / 10} ${u}`;
  return ms < 1e3 ? `${Math.round(ms)} ms` : ms < 6e4 ? r(ms / 1e3, "s") : ms < 36e5 ? r(ms / 6e4, "min") : ms < 1728e5 ? r(ms / 36e5, "h") : r(ms / 864e5, "d");
};

/** A count with thousands separators; `10,000+` when it was counted only up to a bound. */
export const num = (n: number, lowerBound?: boolean): string => `${n.toLocaleString("en-US")}${lowerBound ? "+" : ""}`;

export const relative = (iso: string, now = Date.now()): string => {
  const d = Date.parse(iso) - now;
  return d >= 0 ? `in ${span(d)}` : `${span(-d)} ago`;
};

/** A time shown exactly, with how long ago (or until) in words. */
export const Time: FC<{ iso: string | null | undefined; now?: number }> = ({ iso, now }) =>
  iso ? (
    <time datetime={iso} title={iso}>
      {utc(iso)} <span class="muted">({relative(iso, now)})</span>
    </time>
  ) : (
    <span class="muted">—</span>
  );

export const pretty = (value: unknown): string => {
  const compact = JSON.stringify(value) ?? "undefined";
  // A large value unindented: indentation made a 1 MB payload's edit form 9 MB, past the form limit.
  return compact.length > 65_536 ? compact : JSON.stringify(value, null, 2);
};

/** First line of an error, for tables; the detail page shows the rest. */
export const firstLine = (text: string | null | undefined, max = 140): string => {
  if (!text) return "";
  // Clipped on a whole character: half an emoji showed as "�…".
  return storableText(text.split("\n", 1)[0]!, max);
};

/** One labelled filter drop-down of a list page: "any" first, then the values, the current one selected. */
export const FilterSelect: FC<{ id: string; name: string; label: string; any: string; values: readonly string[]; selected: string | undefined }> = ({
  id,
  name,
  label,
  any,
  values,
  selected,
}) => (
  <div>
    <label for={id}>{label}</label>
    <select id={id} name={name}>
      <option value="">{any}</option>
      {/* A value in the URL that is not among them (a job this deployment no longer defines) stays chosen:
          filtering again, or replaying all that match, must not silently drop it. */}
      {(selected && !values.includes(selected) ? [selected, ...values] : values).map((v) => (
        <option value={v} selected={selected === v}>
          {v}
        </option>
      ))}
    </select>
  </div>
);
