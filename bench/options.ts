/** What `--systems` can name: a system, or a peer in a second configuration. */
export type SystemKey = "ours" | "bare-sql" | "pg-boss" | "graphile-worker" | "graphile-worker-500";

/** The sections beside the drains, which `--skip` can leave out. */
export type SectionKey = "history" | "flow" | "fleet";
const SECTIONS: readonly SectionKey[] = ["history", "flow", "fleet"];

export interface BenchOptions {
  readonly quick: boolean;
  /** Jobs per drain run. */
  readonly n: number;
  /** Repetitions; every figure is the median over them. */
  readonly runs: number;
  readonly concurrency: readonly number[];
  readonly systems: readonly SystemKey[];
  /** Jobs per bulk-enqueue call. */
  readonly chunk: number;
  readonly out: string;
  readonly skip: ReadonlySet<SectionKey>;
}

const ALL: readonly SystemKey[] = ["ours", "bare-sql", "pg-boss", "graphile-worker", "graphile-worker-500"];

export const USAGE = `usage: npm run bench -- [--quick] [--n 20000] [--runs 3] [--concurrency 10,32,100]
                       [--systems ours,bare-sql,pg-boss,graphile-worker,graphile-worker-500] [--chunk 1000] [--out bench/results.json]
                       [--skip history,flow,fleet]`;

const positive = (name: string, value: string | undefined): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(value)}\n${USAGE}`);
  return n;
};

export const parseOptions = (argv: readonly string[]): BenchOptions => {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new Error(`unexpected argument ${JSON.stringify(arg)}\n${USAGE}`);
    const [key, inline] = arg.slice(2).split("=", 2) as [string, string | undefined];
    if (key === "quick" || key === "help") flags.add(key);
    else values.set(key, inline ?? argv[++i] ?? "");
  }
  if (flags.has("help")) throw new Error(USAGE);
  for (const key of values.keys()) {
    if (!["n", "runs", "concurrency", "systems", "chunk", "out", "skip"].includes(key)) throw new Error(`unknown option --${key}\n${USAGE}`);
  }
  const quick = flags.has("quick");
  const systems = (values.get("systems")?.split(",") ?? ALL) as SystemKey[];
  for (const s of systems) if (!ALL.includes(s)) throw new Error(`unknown system ${JSON.stringify(s)}; one of ${ALL.join(", ")}`);
  const skip = (values.get("skip")?.split(",").filter(Boolean) ?? []) as SectionKey[];
  for (const s of skip) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${JSON.stringify(s)}; one of ${SECTIONS.join(", ")}`);
  return {
    quick,
    n: values.has("n") ? positive("n", values.get("n")) : quick ? 2_000 : 20_000,
    runs: values.has("runs") ? positive("runs", values.get("runs")) : 3,
    concurrency: values.has("concurrency") ? values.get("concurrency")!.split(",").map((c) => positive("concurrency", c)) : [10, 32, 100],
    systems,
    chunk: values.has("chunk") ? positive("chunk", values.get("chunk")) : 1_000,
    out: values.get("out") ?? "bench/results.json",
    skip: new Set(skip),
  };
};
