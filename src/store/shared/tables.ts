/** Table names under one prefix. Prefixes are validated by the settings, so they are safe to splice. */
export interface Tables {
  readonly prefix: string;
  readonly queue: string;
  readonly deadLetters: string;
  readonly metrics: string;
  readonly state: string;
  readonly migrations: string;
  readonly schedules: string;
  readonly ticks: string;
  readonly flow: string;
  readonly runs: string;
  readonly queueMinutes: string;
  readonly housekeeping: string;
  readonly loginThrottle: string;
  readonly dashboardLogouts: string;
}

export const tablesFor = (prefix: string): Tables => ({
  prefix,
  queue: `${prefix}queue`,
  deadLetters: `${prefix}dead_letters`,
  metrics: `${prefix}metrics`,
  state: `${prefix}state`,
  migrations: `${prefix}migrations`,
  schedules: `${prefix}schedules`,
  ticks: `${prefix}ticks`,
  flow: `${prefix}flow`,
  runs: `${prefix}runs`,
  queueMinutes: `${prefix}queue_minutes`,
  housekeeping: `${prefix}housekeeping`,
  loginThrottle: `${prefix}login_throttle`,
  dashboardLogouts: `${prefix}dashboard_logouts`,
});

/** Collects positional parameters while a statement is assembled. */
export class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
  /** A whole array of records as one jsonb parameter: the same shape works on every driver. */
  json(value: unknown): string {
    return `${this.add(JSON.stringify(value))}::jsonb`;
  }
}
