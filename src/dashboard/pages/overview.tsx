/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
import type { FC } from "hono/jsx";
import type { Stats } from "../../store/admin/stats.js";
import type { Series, SeriesRange } from "../../store/admin/series.js";
import { Durations } from "../charts/durations.js";
import type { DashboardContext } from "../dashboard-app.js";
import { q, type Routes, userError } from "../dashboard-context.js";
import { Live, Page } from "../layout.js";
import { Charts, RangePicker } from "./overview-charts.js";
import { Cards, LastTick, Tables, TickAlert } from "./overview-parts.js";

interface Props {
  base: string;
  csrf: string;
  stats: Stats;
  series?: Series;
  range: SeriesRange;
  maxTicks: number;
  error?: string;
}

const Overview: FC<Props> = ({ base, csrf, stats, series, range, maxTicks, error }) => (
  <Page title="Overview" base={base} section="overview" csrf={csrf} alert={error}>
    <Live id="ov-now">
      <TickAlert stats={stats} />
      <Cards base={base} stats={stats} maxTicks={maxTicks} />
    </Live>
    <h2>Throughput</h2>
    <RangePicker base={base} range={range} />
    {series ? (
      <Live id="ov-charts">
        <Charts s={series} />
        <h2>Run times</h2>
        <Durations rows={series.durations} />
      </Live>
    ) : null}
    <Live id="ov-tables">
      <Tables base={base} stats={stats} />
      <LastTick stats={stats} />
    </Live>
  </Page>
);

const overview = async (base: string, c: DashboardContext) => {
  const jobs = c.var.jobs;
  const props = { base, csrf: c.var.session.csrf, maxTicks: jobs.settings.maxTicks };
  let read: [Stats, Series];
  try {
    read = await Promise.all([jobs.stats({ minutes: false }), jobs.series(q(c.req.query("range")))]);
  } catch (e) {
    const range: SeriesRange = "1h";
    return c.html(<Overview {...props} stats={await jobs.stats({ minutes: false })} range={range} error={userError(e)} />, 400);
  }
  const [stats, series] = read;
  return c.html(<Overview {...props} stats={stats} series={series} range={series.range} />);
};

export const overviewPages: Routes = (app, { base }) => {
  // Mounted at /dashboard, "/" is /dashboard itself; /dashboard/ comes through the catch-all below, which
  // matches it (strict routing keeps the two apart).
  app.get("/", (c) => overview(base, c));
  app.get("*", async (c, next) => (c.req.path === `${base}/` ? overview(base, c) : next()));
};
