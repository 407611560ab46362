// 3. Start-up breakdown: the import cost of the main dependencies on top of `node -e 0`, and of
// dist/main.js and each chunk it loads lazily (labelled with what its source map says it holds).
import { readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { IMPORT_RUNS, IMPORT_WARMUPS, PKG, ROOT } from "../lib/config.mjs";
import { run } from "../lib/processes.mjs";
import { median, ms, progress, table } from "../lib/report.mjs";

const STATIC_IMPORT = /(?:^|\n)import\s*(?:[^;()]*?\sfrom\s*)?"(\.\.?\/[^"]+)"/g;
const DYNAMIC_IMPORT = /import\("(\.\/chunks\/[^"]+\.js)"\)/g;

/** A bundle file and every file it imports statically (the part of dist/ that loading it evaluates). */
function staticClosure(file, seen = new Set()) {
  if (seen.has(file)) return seen;
  seen.add(file);
  for (const [, spec] of readFileSync(file, "utf8").matchAll(STATIC_IMPORT))
    staticClosure(join(dirname(file), spec), seen);
  return seen;
}

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

/** The chunks dist/main.js loads lazily (the command paths), with what each adds to main.js. */
function lazyChunks() {
  const main = join(ROOT, "dist", "main.js");
  const loaded = staticClosure(main);
  const specs = [...new Set([...readFileSync(main, "utf8").matchAll(DYNAMIC_IMPORT)].map((m) => m[1]))];
  return specs.map((spec) => {
    const file = join(ROOT, "dist", spec);
    const added = [...staticClosure(file)].filter((f) => !loaded.has(f));
    const bytes = added.reduce((sum, f) => sum + statSync(f).size, 0);
    return { spec: `./dist/${spec.slice(2)}`, name: spec.slice(2), contents: contentsOf(added), bytes };
  });
}

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
  let chunks = [];
  try {
    chunks = lazyChunks();
  } catch (error) {
    progress(`could not read the chunks of dist/main.js, table 3b shows main.js only: ${error.message}`);
  }
  const cases = [
    { label: "node -e 0", code: "0" },
    ...packages.map((m) => ({ label: m.label, code: m.code ?? `import(${JSON.stringify(m.spec)})` })),
    { label: "dist/main.js", code: 'import("./dist/main.js")' },
    ...chunks.map((c) => ({
      label: c.name,
      code: `import("./dist/main.js").then(() => import(${JSON.stringify(c.spec)}))`,
    })),
  ];
  const times = cases.map(() => []);
  progress(`start-up breakdown: ${IMPORT_WARMUPS} warm-up + ${IMPORT_RUNS} rounds of ${cases.length} imports`);
  for (let round = 0; round < IMPORT_WARMUPS + IMPORT_RUNS; round++) {
    for (let i = 0; i < cases.length; i++) {
      const index = (round + i) % cases.length;
      const result = await run(["-e", cases[index].code], { env: base, cwd: ROOT });
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
    "  dist/ bundles all but better-sqlite3, argon2, pg and pino, so the CLI pays their parse/evaluate cost but\n" +
      "  not their resolution and file reads; shared dependencies overlap, so these do not add up.",
  );

  console.log(
    "\n  b) the CLI bundle as the commands load it: dist/main.js, then each lazily imported chunk on top of it",
  );
  const mainIndex = packages.length + 1;
  const bundleRows = [
    [
      "dist/main.js (every command)",
      "",
      ms(medians[mainIndex]),
      plus(medians[mainIndex] - baseline),
      "(commander, the global options; each command group is a chunk below)",
    ],
    ...chunks.map((c, i) => [
      c.name,
      `${Math.round(c.bytes / 1024)} KiB`,
      ms(medians[mainIndex + 1 + i]),
      plus(medians[mainIndex + 1 + i] - medians[mainIndex]),
      c.contents,
    ]),
  ];
  console.log(table(["file", "adds", "median", "cost", "holds (from its source map)"], bundleRows, [1, 2, 3]));
  console.log(
    "  cost: dist/main.js over node -e 0; a chunk over dist/main.js alone (with the shared chunks it pulls in);\n" +
      "  a few ms either way is noise (see the IQRs in section 1).",
  );
}
