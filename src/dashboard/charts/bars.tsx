/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { Child, FC } from "hono/jsx";

/** One stacked series: its CSS class (the colour) and what it counts. */
export interface BarSeries {
  readonly cls: string;
  readonly label: string;
}

export interface BarsProps {
  readonly id: string;
  readonly title: Child;
  /** Plot height in px; small multiples pass a small one. */
  readonly height: number;
  /** The top of the y-axis: callers that draw several charts pass one maximum to all of them. */
  readonly max: number;
  readonly ticks: readonly number[];
  readonly fmt: (v: number) => string;
  /** What the y-axis counts, e.g. "jobs per minute". */
  readonly unit: string;
  readonly series: readonly BarSeries[];
  /** Per bucket, one value per series (stacked bottom up in that order). */
  readonly values: ReadonlyArray<readonly number[]>;
  /** A bucket's time, for the tooltip of its bars. */
  readonly at: (i: number) => string;
  /** Under the x-axis: its start, middle and end. */
  readonly x: readonly [string, string, string];
  readonly summary: string;
}

const BAR = 10;

/**
 * Stacked bars on a labelled y-axis, as SVG. The plot stretches to the page's width
 * (`preserveAspectRatio="none"`, bars only) while the axis is drawn at its real size, so its
 * labels stay legible on a phone and on a wide screen. Each bar carries its count (`data-n`).
 */
export const Bars: FC<BarsProps> = ({ id, title, height: h, max, ticks, fmt, unit, series, values, at, x, summary }) => {
  const w = values.length * BAR;
  const y = (v: number) => h - (Math.min(v, max) / max) * h;
  return (
    <figure class="ch" id={id}>
      <figcaption>{title}</figcaption>
      <div class="u">{unit}</div>
      <svg class="ya" width="48" height={h} viewBox={`0 0 48 ${h}`} aria-label={`y-axis: ${unit}, 0 to ${fmt(max)}`}>
        {ticks.map((t) => (
          <text x="44" y={Math.max(9, Math.min(h - 1, y(t) + 4))} text-anchor="end">
            {fmt(t)}
          </text>
        ))}
      </svg>
      <svg class="plot" width="100%" height={h} viewBox={`0 0 ${w} ${h}`} preserveAspectRatio="none" role="img" aria-label={summary} data-max={max}>
        {ticks.map((t) => (t > 0 ? <path class="gl" d={`M0 ${y(t)}H${w}`} vector-effect="non-scaling-stroke" /> : null))}
        {values.map((vs, i) => {
          let base = 0;
          return vs.map((v, k) => {
            if (v <= 0) return null;
            const top = y(base + v);
            const bottom = y(base);
            base += v;
            return (
              <rect x={i * BAR + 1} y={top} width={BAR - 2} height={bottom - top} class={series[k]!.cls} data-n={v}>
                <title>{`${at(i)}: ${fmt(v)} ${series[k]!.label}`}</title>
              </rect>
            );
          });
        })}
      </svg>
      <div class="x">
        {x.map((l) => (
          <span>{l}</span>
        ))}
      </div>
    </figure>
  );
};
