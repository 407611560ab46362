import { Histogram, Registry } from "prom-client";
import { expect, it } from "vitest";
import { LightHistogram } from "../../src/server/metrics/light-histogram.js";
import { parseExposition } from "../helpers/prometheus.js";

const BUCKETS = [0.01, 0.1, 1];
const OBSERVED: [route: string, seconds: number][] = [
  ["/a", 0.005],
  ["/a", 0.01],
  ["/a", 0.05],
  ["/a", 2],
  ["/b", 0.5],
];

/** The samples a registry holding `metric` gives, parsed by the Prometheus project's client. */
async function scraped(register: (registry: Registry) => void) {
  const registry = new Registry();
  register(registry);
  return parseExposition(await registry.metrics());
}

it("scrapes exactly as prom-client's own histogram of the same observations", async () => {
  const light = await scraped((registry) => {
    const histogram = new LightHistogram("x_seconds", "x", BUCKETS);
    registry.registerMetric(histogram as never);
    for (const [route, seconds] of OBSERVED)
      histogram.observe(
        histogram.series(route, () => ({ route })),
        seconds,
      );
  });
  const own = await scraped((registry) => {
    const histogram = new Histogram({
      name: "x_seconds",
      help: "x",
      labelNames: ["route"],
      buckets: BUCKETS,
      registers: [registry],
    });
    for (const [route, seconds] of OBSERVED) histogram.observe({ route }, seconds);
  });
  // one line per sample, its labels in name order, the lines sorted: the same text for the same samples
  const lines = (samples: typeof light) =>
    samples.map(({ name, labels, value }) => `${name}${JSON.stringify(Object.entries(labels).sort())} ${value}`).sort();
  expect(lines(light)).toEqual(lines(own));
  expect(light).toContainEqual({ name: "x_seconds_bucket", labels: { route: "/a", le: "+Inf" }, value: 4 });
});
