import { spawnSync } from "node:child_process";
import { findPython } from "./python.js";

/** One sample of a scrape: its name (with _count, _bucket …), its labels, its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

// the Prometheus project's own Python client parses the text, not our code nor prom-client's
const PARSE = `
import json, sys
from prometheus_client.parser import text_string_to_metric_families
samples = [
    {"name": s.name, "labels": s.labels, "value": s.value}
    for family in text_string_to_metric_families(sys.stdin.read())
    for s in family.samples
]
print(json.dumps(samples))
`;

/** The samples of Prometheus' text format; throws when the text does not parse. */
export function parseExposition(text: string): Sample[] {
  const python = findPython(["prometheus_client"]);
  if (!python) throw new Error("python3 with prometheus_client is needed (Debian: python3-prometheus-client)");
  const parsed = spawnSync(python, ["-c", PARSE], { input: text, encoding: "utf8" });
  if (parsed.status !== 0) throw new Error(`the exposition did not parse:\n${parsed.stderr}`);
  return JSON.parse(parsed.stdout) as Sample[];
}

/** The value of the sample named `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const sample = samples.find(
    (s) => s.name === name && Object.entries(labels).every(([key, value]) => s.labels[key] === value),
  );
  return sample?.value ?? 0;
}
