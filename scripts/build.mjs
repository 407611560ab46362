// Bundles the CLI and the server, each into one file that src/code-cache.ts loads with V8's code
// cache: dist/cli.<hash>.js (every command), dist/server.<hash>.js (the embedded mode and the
// `server` commands, loaded only by them), dist/code-cache.cjs (the loader) and
// dist/bundles.json (the names of the current bundles). The server bundle is built twice: the
// first build compiles every route's schemas (precompiledSchemas below), the second holds them.
// It builds beside dist/ and swaps the folders, so that a process running from dist/ meanwhile
// (a test, a server) never sees it half-written.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, sep } from "node:path";
import { runInThisContext } from "node:vm";
import { build } from "esbuild";

const root = new URL("../", import.meta.url);
const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8"));
const next = new URL(`dist.next-${process.pid}/`, root);
const old = new URL(`dist.old-${process.pid}/`, root);
const dist = new URL("dist/", root);

/**
 * Modules that a dependency requires when it loads, for work bizctl never or seldom asks of it.
 * Each is handed a stand-in that requires the real module at its first use, so that a command
 * does not parse and run it at every start; what uses it still works, and pays for it then.
 * Each entry says why.
 */
const ON_DEMAND = [
  {
    // @inquirer/prompts re-exports every prompt; the editor prompt, which we never show, brings
    // an encoding converter (iconv-lite, 500 KB) that every command would read
    importer: `${sep}@inquirer${sep}prompts${sep}`,
    module: "@inquirer/editor",
    standIn: "module.exports = { default: (...args) => load().default(...args) };",
  },
  {
    // undici's Client requires its HTTP/2 half, which loads node:http2 (with tls and the HTTP
    // server it builds on): 14 ms of every remote command, for a protocol we never ask for (no
    // `allowH2`); a connection that negotiates h2 still works
    importer: `${sep}undici${sep}lib${sep}dispatcher${sep}client.js`,
    module: "./client-h2.js",
    standIn: "module.exports = function connectH2(...args) { return load()(...args); };",
  },
  {
    // Fastify loads every server it can build and the resolver its listen() uses; the embedded
    // mode listens on nothing (light-my-request) and `server start` builds node:http's only, so
    // HTTPS and HTTP/2 (with tls), and dns, wait for a use
    importer: `${sep}fastify${sep}lib${sep}server.js`,
    module: "node:https",
    standIn: "module.exports = { createServer: (...args) => load().createServer(...args) };",
  },
  {
    importer: `${sep}fastify${sep}lib${sep}server.js`,
    module: "node:http2",
    standIn:
      "module.exports = { createServer: (...args) => load().createServer(...args), createSecureServer: (...args) => load().createSecureServer(...args) };",
  },
  {
    importer: `${sep}fastify${sep}lib${sep}server.js`,
    module: "node:dns",
    standIn: "module.exports = { lookup: (...args) => load().lookup(...args) };",
  },
  {
    // commander requires node:child_process (with dgram and net) for executable subcommands,
    // which our command tree does not have: 2 ms of every command
    importer: `${sep}commander${sep}lib${sep}command.js`,
    module: "node:child_process",
    standIn: "module.exports = { spawn: (...args) => load().spawn(...args) };",
  },
  {
    // @fastify/swagger requires yaml (290 KB of source) for a YAML document; we serve JSON
    importer: `${sep}@fastify${sep}swagger${sep}`,
    module: "yaml",
    standIn:
      "module.exports = { parse: (...args) => load().parse(...args), stringify: (...args) => load().stringify(...args) };",
  },
  {
    // @fastify/rate-limit requires ip-address to key IPv6 clients by subnet: on the first request
    // from one, not at every embedded command. The stand-in is a constructor that returns the
    // real instance, so `new Address6(ip)` works unchanged
    importer: `${sep}@fastify${sep}rate-limit${sep}index.js`,
    module: "ip-address",
    standIn: "module.exports = { Address6: function Address6(...args) { return new (load().Address6)(...args); } };",
  },
];

const onDemand = {
  name: "on-demand",
  setup(esbuild) {
    for (const [index, { importer, module }] of ON_DEMAND.entries()) {
      const filter = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`);
      esbuild.onResolve({ filter }, (args) =>
        args.namespace === "file" && args.importer.includes(importer)
          ? { path: join(dirname(args.importer), `${index}.on-demand.js`), namespace: "on-demand" }
          : undefined,
      );
    }
    esbuild.onLoad({ filter: /.*/, namespace: "on-demand" }, (args) => {
      const { module, standIn } = ON_DEMAND[Number(args.path.match(/(\d+)\.on-demand\.js$/)[1])];
      return {
        contents: `let real; const load = () => (real ??= require(${JSON.stringify(module)}));\n${standIn}`,
        resolveDir: dirname(args.path),
        loader: "js",
      };
    });
  },
};

/**
 * The CLI's import of the server entry becomes a load of the server bundle through the code cache:
 * the two bundles share no module, and the server's is read only by the commands that run one.
 */
const serverBundle = {
  name: "server-bundle",
  setup(esbuild) {
    esbuild.onResolve({ filter: /\/server\/entry\.js$/ }, (args) =>
      args.importer.includes(`${sep}src${sep}cli${sep}`) ? { path: "server", namespace: "server-bundle" } : undefined,
    );
    esbuild.onResolve({ filter: /^\.\/code-cache\.cjs$/, namespace: "server-bundle" }, (args) => ({
      path: args.path,
      external: true,
    }));
    esbuild.onLoad({ filter: /.*/, namespace: "server-bundle" }, () => ({
      contents: 'module.exports = require("./code-cache.cjs").loadBundle(__dirname, "server");',
      loader: "js",
    }));
  },
};

const common = {
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20.19",
  // import() of a package becomes a require(): a script compiled by vm.Script cannot import()
  supported: { "dynamic-import": false },
  // every command reads the bundle: without comments and indentation there is a third less to
  // read. Comments are also where packages put non-ASCII text (esbuild escapes the rest), and
  // one such character makes V8 hold the whole bundle as two-byte text. Identifiers stay
  // unminified (names in stack traces; the source maps map the rest) and the licence comments go
  // to .LEGAL.txt files.
  minifyWhitespace: true,
  legalComments: "external",
  sourcemap: "external",
  // native addons and drivers stay in node_modules; pino's worker transports need their files.
  // Every command reads its whole bundle, so what few commands use is left in node_modules too:
  // mailparser (a megabyte, for `server outbox`), yaml (YAML records, the swagger stand-in above),
  // the editor prompt's stand-in, and in the server nodemailer (the first mail sent), ioredis (a
  // server with Redis), zxcvbn's dictionaries (the first password set), prom-client (a server
  // with --metrics-port) and OpenTelemetry (a server with OTEL_EXPORTER_OTLP_ENDPOINT).
  external: [
    "better-sqlite3",
    "argon2",
    "pg",
    "pg-native",
    "pino",
    "thread-stream",
    "mailparser",
    "yaml",
    "@inquirer/editor",
    "nodemailer",
    "ioredis",
    "@zxcvbn-ts/language-common",
    "prom-client",
    "@opentelemetry/api",
    "@opentelemetry/context-async-hooks",
    "@opentelemetry/core",
    "@opentelemetry/exporter-trace-otlp-http",
    "@opentelemetry/resources",
    "@opentelemetry/sdk-trace-base",
  ],
  define: { BIZCTL_VERSION: JSON.stringify(pkg.version), "import.meta.url": "__bizctlMetaUrl" },
  logLevel: "warning",
  write: false,
};

/** One bundle in memory, wrapped as the function code-cache.ts calls. */
async function bundleInMemory(role, entry, plugins) {
  const outfile = join(next.pathname, `${role}.js`);
  const result = await build({
    ...common,
    entryPoints: [new URL(entry, root).pathname],
    outfile,
    banner: {
      js: "(function (exports, require, module, __filename, __dirname) {const __bizctlMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    },
    footer: { js: "})" },
    plugins,
  });
  return { outfile, result, code: result.outputFiles.find((file) => file.path === outfile) };
}

/**
 * One bundle, written as `<role>.<hash>.js` with its map and licences: a new build is a new
 * name, so a code cache is never offered to another build.
 */
async function bundle(role, entry, plugins) {
  const { result, code } = await bundleInMemory(role, entry, plugins);
  // the loader reads it as latin1, which is right for ASCII only
  if (code.contents.some((byte) => byte > 0x7f)) throw new Error(`${role}.js holds non-ASCII bytes`);
  const named = `${role}.${createHash("sha256").update(code.contents).digest("hex").slice(0, 12)}.js`;
  for (const file of result.outputFiles) {
    writeFileSync(join(next.pathname, basename(file.path).replace(`${role}.js`, named)), file.contents);
  }
  return named;
}

/**
 * Every route's validators and serializers, compiled by Fastify's standalone compilers in an app
 * built from a first server bundle (on a throw-away data dir), then bundled as code in place of
 * src/server/plugins/precompiled-schemas.ts: the embedded CLI runs them from the code cache
 * instead of compiling the route it serves at every command. Identical code is kept once (a GET
 * and its HEAD, the routes that answer 204 with no body). The app is built with schema checking on,
 * so a schema that is not valid JSON Schema fails the build.
 */
async function precompiledSchemas() {
  const { code, outfile } = await bundleInMemory("server", "src/server/entry.ts", [onDemand]);
  const server = { exports: {} };
  runInThisContext(code.text, { filename: outfile })(
    server.exports,
    createRequire(outfile),
    server,
    outfile,
    dirname(outfile),
  );
  const requireHere = createRequire(import.meta.url);
  const { StandaloneValidator } = requireHere("@fastify/ajv-compiler");
  const { StandaloneSerializer } = requireHere("@fastify/fast-json-stringify-compiler");
  const units = new Map();
  const tables = { validators: {}, serializers: {} };
  const store = (table) => (route, source) => {
    if (!units.has(source)) units.set(source, `unit${units.size}`);
    tables[table][server.exports.routeKey(route)] = units.get(source);
  };
  const dataDir = mkdtempSync(join(tmpdir(), "bizctl-build-"));
  try {
    const app = await server.exports.buildApp({
      dataDir,
      log: false,
      schemaCompilers: {
        buildValidator: StandaloneValidator({ readMode: false, storeFunction: store("validators") }),
        buildSerializer: StandaloneSerializer({ readMode: false, storeFunction: store("serializers") }),
      },
    });
    await app.ready();
    await app.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const entries = (table) =>
    Object.entries(table)
      .map(([key, unit]) => `    ${JSON.stringify(key)}: () => load(${unit}),`)
      .join("\n");
  return [
    "// generated by scripts/build.mjs: each unit is the CommonJS module a standalone compiler wrote",
    "const loaded = new Map();",
    "function load(unit) {",
    "  let module = loaded.get(unit);",
    "  if (module === undefined) {",
    "    module = { exports: {} };",
    "    unit(module, module.exports);",
    "    loaded.set(unit, module);",
    "  }",
    "  return module.exports;",
    "}",
    ...[...units].map(([source, name]) => `function ${name}(module, exports) {\n${source}\n}`),
    "export const precompiledSchemas = {",
    `  validators: {\n${entries(tables.validators)}\n  },`,
    `  serializers: {\n${entries(tables.serializers)}\n  },`,
    "};",
  ].join("\n");
}

/** The generated table in place of the module that has none. */
const precompiled = (source) => ({
  name: "precompiled-schemas",
  setup(esbuild) {
    esbuild.onLoad({ filter: /[\\/]src[\\/]server[\\/]plugins[\\/]precompiled-schemas\.ts$/ }, () => ({
      contents: source,
      loader: "js",
      resolveDir: root.pathname,
    }));
  },
});

try {
  mkdirSync(next, { recursive: true });
  const bundles = {
    server: await bundle("server", "src/server/entry.ts", [onDemand, precompiled(await precompiledSchemas())]),
    cli: await bundle("cli", "src/main.ts", [onDemand, serverBundle]),
  };
  await build({
    ...common,
    write: true,
    sourcemap: false,
    entryPoints: [new URL("src/code-cache.ts", root).pathname],
    outfile: join(next.pathname, "code-cache.cjs"),
  });
  writeFileSync(new URL("bundles.json", next), `${JSON.stringify(bundles, null, 2)}\n`);
  try {
    renameSync(dist, old);
  } catch {
    // no previous build
  }
  renameSync(next, dist);
} finally {
  rmSync(next, { recursive: true, force: true });
  rmSync(old, { recursive: true, force: true });
}
