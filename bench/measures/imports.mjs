// 3. Start-up breakdown: the import cost of the main dependencies on top of `node -e 0`, and of
// loading each bundle of dist/ with its code cache and without (labelled with what its source map
// says it holds).
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { IMPORT_RUNS, IMPORT_WARMUPS, PKG, ROOT } from "../lib/config.mjs";
import { run } from "../lib/processes.mjs";
import { median, ms, progress, table } from "../lib/report.mjs";

/** What a set of bundle files holds, from their source maps: packages by file count, else our sources. */
function contentsOf(files) {
  const packages = new Map();
  const own = [];
  for (const file of files) {
    let sources = [];
    try {
      sources = JSON.parse(readFileSync(`${file}.map`, "utf8")).sources ?? [];
    } catch {}
    for (const source of sources) {
      const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1];
      if (pkg) packages.set(pkg, (packages.get(pkg) ?? 0) + 1);
      else if (/(^|\/)src\//.test(source)) own.push(source.replace(/^.*?src\//, "src/"));
    }
  }
  // our direct dependencies first (they are why the chunk exists), then the rest by file count
  const direct = new Set(Object.keys(PKG.dependencies ?? {}));
  const ranked = [...packages].sort((a, b) => b[1] - a[1]).map(([name]) => name);
  const top = [...ranked.filter((n) => direct.has(n)), ...ranked.filter((n) => !direct.has(n))];
  if (top.length) {
    const shown = Math.max(4, ranked.filter((n) => direct.has(n)).length);
    return `${top.slice(0, shown).join(", ")}${top.length > shown ? ` +${top.length - shown} more` : ""}`;
  }
  return own.slice(0, 3).join(", ") + (own.length > 3 ? ` +${own.length - 3} more` : "") || "?";
}

/** The bundles of dist/bundles.json, with their size and what their source maps say they hold. */
function bundles() {
  const names = JSON.parse(readFileSync(join(ROOT, "dist", "bundles.json"), "utf8"));
  return Object.entries(names).map(([role, name]) => {
    const file = join(ROOT, "dist", name);
    return { role, name, bytes: statSync(file).size, contents: contentsOf([file]) };
  });
}

/** `node -e` code that loads one bundle as bin/bizctl.js does (the server bundle after the CLI's). */
const loadCode = (role) =>
  `const c = require("./dist/code-cache.cjs"), d = require("node:path").resolve("dist"); c.loadBundle(d, "cli");${
    role === "cli" ? "" : ` c.loadBundle(d, ${JSON.stringify(role)});`
  }`;

export async function measureImports({ base }, startup) {
  const packages = [
    { label: "(ESM loader: import of a builtin)", spec: "node:os" },
    { label: "commander", spec: "commander" },
    { label: "undici", spec: "undici" },
    { label: "conf", spec: "conf" },
    { label: "chalk", spec: "chalk" },
    { label: "cli-table3", spec: "cli-table3" },
    { label: "fastify", spec: "fastify" },
    { label: "better-sqlite3 (JS only)", spec: "better-sqlite3" },
    {
      label: "better-sqlite3 + open :memory: (native addon)",
      code: 'import("better-sqlite3").then((m) => new m.default(":memory:").close())',
    },
    { label: "jose", spec: "jose" },
    { label: "kysely (embedded too)", spec: "kysely" },
    { label: "pino (embedded too)", spec: "pino" },
    { label: "@fastify/swagger (embedded too)", spec: "@fastify/swagger" },
  ];
  const built = bundles();
  // each bundle with the code cache the set-up's commands wrote, and without any
  const uncached = { ...base, NODE_DISABLE_COMPILE_CACHE: "1" };
  const cases = [
    { label: "node -e 0", code: "0" },
    ...packages.map((m) => ({ label: m.label, code: m.code ?? `import(${JSON.stringify(m.spec)})` })),
    ...built.flatMap((b) => [
      { label: b.name, code: loadCode(b.role) },
      { label: `${b.name} (no cache)`, code: loadCode(b.role), env: uncached },
    ]),
  ];
  const times = cases.map(() => []);
  progress(`start-up breakdown: ${IMPORT_WARMUPS} warm-up + ${IMPORT_RUNS} rounds of ${cases.length} imports`);
  for (let round = 0; round < IMPORT_WARMUPS + IMPORT_RUNS; round++) {
    for (let i = 0; i < cases.length; i++) {
      const index = (round + i) % cases.length;
      const result = await run(["-e", cases[index].code], { env: cases[index].env ?? base, cwd: ROOT });
      if (round >= IMPORT_WARMUPS) times[index].push(result.ms);
    }
  }
  const medians = times.map(median);
  const [baseline, loader] = medians;
  const plus = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(1)} ms`;

  console.log(
    `\n3. Start-up breakdown: \`node -e 'import("X")'\` from the project dir, median of ${IMPORT_RUNS} runs, interleaved; node -e 0 = ${ms(baseline)}`,
  );
  console.log(
    `  CLI over node -e 0 (section 1): --version ${plus(startup.medians.version - startup.baseline)}, ` +
      `remote list ${plus(startup.medians.remote - startup.baseline)}, embedded list ${plus(startup.medians.embedded - startup.baseline)}`,
  );
  console.log("\n  a) the packages, from node_modules");
  const packageRows = packages.map((p, i) => {
    const m = medians[i + 1];
    return [p.label, ms(m), plus(m - baseline), i === 0 ? "" : plus(m - loader)];
  });
  console.log(table(["import", "median", "over node -e 0", "over the loader"], packageRows, [1, 2, 3]));
  console.log(
    "  dist/ bundles all but the native addons, the drivers and a few packages few commands use (scripts/build.mjs),\n" +
      "  and its code cache spares the parse; shared dependencies overlap, so these do not add up.",
  );

  console.log("\n  b) the bundles as the commands load them, with the code cache and without it");
  const first = packages.length + 1;
  const cli = medians[first + 2 * built.findIndex((b) => b.role === "cli")];
  const bundleRows = built.flatMap((b, i) => {
    const [cached, cold] = [medians[first + 2 * i], medians[first + 2 * i + 1]];
    const over = b.role === "cli" ? baseline : cli;
    return [
      [b.name, `${Math.round(b.bytes / 1024)} KiB`, ms(cached), plus(cached - over), b.contents],
      [`  without the code cache`, "", ms(cold), plus(cold - over), ""],
    ];
  });
  console.log(table(["file", "size", "median", "cost", "holds (from its source map)"], bundleRows, [1, 2, 3]));
  console.log(
    "  cost: the CLI bundle over node -e 0; the server bundle over the CLI bundle with its cache (the embedded\n" +
      "  mode and the server commands load both); loading runs each bundle's top level, not a command;\n" +
      "  a few ms either way is noise (see the IQRs in section 1).",
  );
}
