/** @jsxRuntime automatic */
/** @jsxImportSource #jsx */
import type { FC } from "hono/jsx";
import type { Stats } from "../../store/admin/stats.js";
import { RANGES, type Series, type SeriesRange } from "../../store/admin/series.js";
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
        {series.jobs > series.durations.length ? <p class="muted">The {series.durations.length} busiest of {series.jobs} jobs in this range.</p> : null}
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
  let read: [Stats, Series | undefined];
  const range = q(c.req.query("range"));
  try {
    // A live poll leaves the 24 h and 7 d charts as the page drew them (buckets of 15 minutes and 2 hours,
    // read anew every 3 s per open tab, at hundreds of jobs most of the database's work): a region the
    // answer lacks is kept. The hour's chart stays live.
    const drawn = c.req.header("x-pgtick-live") !== undefined && range !== undefined && range !== "1h" && Object.hasOwn(RANGES, range);
    read = await Promise.all([jobs.stats({ minutes: false }), drawn ? undefined : jobs.series(range)]);
  } catch (e) {
    // What the caller got wrong (a bad range) first: anything else goes on to the failed page at once (the stats
    // were read again first, and a stalled database held the page and a connection for a second 15 s).
    const message = userError(e);
    return c.html(<Overview {...props} stats={await jobs.stats({ minutes: false })} range="1h" error={message} />, 400);
  }
  const [stats, series] = read;
  return c.html(<Overview {...props} stats={stats} series={series} range={series?.range ?? (range as SeriesRange)} />);
};

export const overviewPages: Routes = (app, { base }) => {
  // Mounted at /dashboard, "/" is /dashboard itself; /dashboard/ comes through the catch-all below, which
  // matches it (strict routing keeps the two apart).
  app.get("/", (c) => overview(base, c));
  app.get("*", async (c, next) => (c.req.path === `${base}/` ? overview(base, c) : next()));
};
