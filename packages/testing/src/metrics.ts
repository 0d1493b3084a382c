/** One sample of a Prometheus text exposition: `name{label="value",...} value`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Scrape {
  text: string;
  samples: Sample[];
  /** The sum of the samples of `name` whose labels include `labels`; undefined when there is none. */
  value(name: string, labels?: Record<string, string>): number | undefined;
  /** Whether the exposition declares the metric (`# TYPE name ...`), with samples or not. */
  declares(name: string): boolean;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const labelPair = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const match = sampleLine.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(labelPair)) labels[pair[1] ?? ""] = (pair[2] ?? "").replace(/\\(.)/g, "$1");
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return {
    text,
    samples,
    value(name, labels = {}) {
      const matching = samples.filter(
        (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
      );
      return matching.length === 0 ? undefined : matching.reduce((sum, sample) => sum + sample.value, 0);
    },
    declares: (name) => text.includes(`# TYPE ${name} `),
  };
}

/** GET <base>/metrics, as Prometheus scrapes it. */
export async function scrape(baseUrl: string): Promise<Scrape> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`${baseUrl}/metrics answered ${response.status}`);
  return parseExposition(await response.text());
}
