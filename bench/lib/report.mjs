// Numbers, tables, the PASS/MISS verdicts and the closing summary.

export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}
export const median = (values) => quantile(values, 0.5);
export const ms = (value) => `${value.toFixed(1)} ms`;
export const ratio = (value) => `${value.toFixed(2)}x`;

export function table(headers, rows, rightAligned = []) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    `  ${cells
      .map((c, i) => (rightAligned.includes(i) ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i])))
      .join("  ")
      .trimEnd()}`;
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/** Every compared ratio, for the closing summary. */
export const verdicts = [];
/** op "<=" or ">=" compares the ratio with the target; "within" passes when |1 - ratio| < target. */
export function verdict(name, value, op, target) {
  const pass = op === "<=" ? value <= target : op === ">=" ? value >= target : Math.abs(1 - value) < target;
  const targetText = op === "within" ? `|1 - x| < ${target.toFixed(2)}` : `${op} ${ratio(target)}`;
  verdicts.push({ name, value, targetText, pass });
  return `target ${targetText}  ${pass ? "PASS" : "MISS"}`;
}

/** A ratio the summary shows without a target (nothing to pass or miss). */
export function info(name, value) {
  verdicts.push({ name, value, targetText: "(informational)", pass: undefined });
  return "(informational, no target)";
}

export const progress = (message) => process.stderr.write(`… ${message}\n`);

export const ms2 = (value) => `${value.toFixed(2)} ms`;
export const thousands = (n) => n.toLocaleString("en-US").replace(/,/g, " ");

export function summary() {
  console.log("\nSummary");
  console.log(
    table(
      ["measure", "ratio", "target", "result"],
      verdicts.map((v) => [v.name, ratio(v.value), v.targetText, v.pass === undefined ? "" : v.pass ? "PASS" : "MISS"]),
      [1],
    ),
  );
  const targets = verdicts.filter((v) => v.pass !== undefined);
  const met = targets.filter((v) => v.pass).length;
  console.log(`  ${met} of ${targets.length} targets met`);
}
