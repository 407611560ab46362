// Timing two kinds of request against each other over one keep-alive connection: pairs sent
// A B then B A, each request timed under its kind and under the kind it follows.
import { median, ms2, quantile, ratio, table, verdict } from "./report.mjs";

/** The bar of the enumeration timings: medians within 10%. */
export const WITHIN = 0.1;

/**
 * Sends `rounds` pairs of the two cases, A B then B A, so that each kind follows each kind equally
 * often; records each request's time under its kind and under the kind it follows.
 */
export async function interleave(client, cases, { rounds, warmups, between }) {
  const after = Object.fromEntries(cases.map((c) => [c.key, []]));
  let previous;
  for (let i = 0; i < warmups + rounds; i++) {
    const pair = i % 2 === 0 ? [cases[0], cases[1]] : [cases[1], cases[0]];
    for (const c of pair) {
      const started = process.hrtime.bigint();
      const request = typeof c.request === "function" ? c.request(i) : c.request;
      const response = await client.request(request);
      const text = await response.body.text();
      const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
      if (response.statusCode !== c.status) {
        throw new Error(
          `${request.method} ${request.path} ${c.label} answered ${response.statusCode}: ${text.slice(0, 300)}`,
        );
      }
      c.bodies.add(text.replace(/"requestId":"[^"]*"/, "").replace(/try again in \d+ s/, "try again in N s"));
      if (i >= warmups) {
        c.times.push(elapsed);
        if (previous) after[previous].push(elapsed);
      }
      previous = c.key;
    }
    // unmeasured work between pairs (a correct login that clears the failure count) breaks the chain
    if (between && (await between(i))) previous = undefined;
  }
  return after;
}

/** The table of both kinds and of the request after each, and the within-10% verdicts. */
export function report(title, cases, after) {
  const [a, b] = cases;
  const rows = cases.map((c) => [
    c.label,
    ms2(median(c.times)),
    ms2(quantile(c.times, 0.9)),
    `${ms2(quantile(c.times, 0.25))}–${ms2(quantile(c.times, 0.75))}`,
  ]);
  for (const c of cases) {
    rows.push([
      `  the request right after ${c.short}`,
      ms2(median(after[c.key])),
      ms2(quantile(after[c.key], 0.9)),
      "",
    ]);
  }
  console.log(table(["request", "median", "p90", "IQR"], rows, [1, 2]));
  const own = median(a.times) / median(b.times);
  const next = median(after[a.key]) / median(after[b.key]);
  console.log(
    `  median ${a.short} / ${b.short}: ${ratio(own)}  ${verdict(`${title}: median ${a.short} / ${b.short}`, own, "within", WITHIN)}`,
  );
  console.log(
    `  median of the next request, after ${a.short} / after ${b.short}: ${ratio(next)}  ${verdict(`${title}: the next request, after ${a.short} / ${b.short}`, next, "within", WITHIN)}`,
  );
  const bodies = new Set(cases.flatMap((c) => [...c.bodies]));
  console.log(
    `  answers: ${bodies.size === 1 ? "byte-identical for both (request id aside)" : `${bodies.size} different bodies (!)`}`,
  );
}
