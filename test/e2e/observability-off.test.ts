/**
 * Metrics and traces cost nothing when they are off (spec 1.8): a `server start` without
 * `--metrics-port` and without OTEL_EXPORTER_OTLP_ENDPOINT loads neither prom-client nor any
 * OpenTelemetry package, and one with `--metrics-port` no OpenTelemetry SDK. The files the process required are read as it exits; the server with
 * `--metrics-port` is the control that the check sees a package that is loaded.
 */
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { httpJson, ROOT, useServer } from "../helpers/cli.js";

const PRELOAD = join(ROOT, "test", "fixtures", "loaded-modules.cjs");

describe.each([
  { name: "neither", args: [], promClient: false },
  { name: "--metrics-port", args: ["--metrics-port", "0"], promClient: true },
])("server start with $name", ({ args, promClient }) => {
  const record = join(tmpdir(), `bizctl-loaded-${process.pid}-${args.length}.json`);
  const s = useServer({
    login: false,
    storage: async () => ({
      args: [],
      env: { NODE_OPTIONS: `--require ${PRELOAD}`, BIZCTL_TEST_LOADED_MODULES: record },
      drop: async () => {},
    }),
    serverArgs: args,
  });

  it(`loads ${promClient ? "prom-client but not" : "neither prom-client nor"} OpenTelemetry's SDK`, async () => {
    expect((await httpJson(s.server, "GET", "/health")).status).toBe(200);
    expect(await s.server.stop()).toBe(0);
    const loaded = JSON.parse(await readFile(record, "utf8")) as string[];
    expect(loaded.some((file) => file.includes("node_modules/better-sqlite3/"))).toBe(true);
    expect(loaded.some((file) => file.includes("node_modules/prom-client/"))).toBe(promClient);
    // the SDK never; its API, a shim that does nothing alone, comes with prom-client (for exemplars)
    expect(loaded.filter((file) => /node_modules\/@opentelemetry\/(?!api\/)/.test(file))).toEqual([]);
    expect(loaded.some((file) => file.includes("node_modules/@opentelemetry/api/"))).toBe(promClient);
  });
});
