/**
 * The server bundle's precompiled validators and serializers (scripts/build.mjs,
 * src/server/plugins/precompiled-schemas.ts): an embedded app built from the bundle answers as
 * one built from the sources, which compiles every schema at run time, and it compiled none.
 * Each request of the table goes to both apps, on the same data dir, and their answers must be
 * the same: status, content type and body (timestamps aside).
 */
import { rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import { ADMIN_PASSWORD, ADMIN_USER, makeDataDir } from "../helpers/server.js";

interface ServerBundle {
  buildApp: typeof buildApp;
  initInstance(options: { dataDir: string; adminUser: string; password: string }): Promise<unknown>;
  schemaCompilations(): { atRunTime: number; precompiled: number };
}

const dist = join(import.meta.dirname, "..", "..", "dist");

interface Scenario {
  name: string;
  method: "GET" | "POST" | "PUT" | "DELETE" | "HEAD";
  url: string;
  body?: unknown;
  anonymous?: boolean;
}

const EVENTS = "/api/crm/v1/events";
const SCENARIOS: Scenario[] = [
  { name: "health", method: "GET", url: "/health", anonymous: true },
  { name: "health, HEAD", method: "HEAD", url: "/health", anonymous: true },
  { name: "ready", method: "GET", url: "/ready", anonymous: true },
  { name: "isLogged", method: "GET", url: "/auth/isLogged" },
  { name: "isLogged, no token", method: "GET", url: "/auth/isLogged", anonymous: true },
  { name: "login, no body", method: "POST", url: "/auth/login", anonymous: true },
  { name: "login, a number for a name", method: "POST", url: "/auth/login", body: { userName: 1 }, anonymous: true },
  {
    name: "login, wrong password",
    method: "POST",
    url: "/auth/login",
    body: { userName: ADMIN_USER, password: "not it at all, no" },
    anonymous: true,
  },
  {
    name: "create an event",
    method: "POST",
    url: EVENTS,
    body: { code: "P1", name: "Precompiled", startsAt: "2027-01-10T09:00:00Z", customFields: { room: "A" } },
  },
  {
    name: "create, a bad date and an unknown field",
    method: "POST",
    url: EVENTS,
    body: { code: "P2", name: "x", startsAt: "tomorrow", colour: "red" },
  },
  {
    name: "create, a code the pattern refuses",
    method: "POST",
    url: EVENTS,
    body: { code: "no spaces", name: "x", startsAt: "2027-01-10T09:00:00Z" },
  },
  { name: "create, an array for a body", method: "POST", url: EVENTS, body: [1, 2] },
  { name: "list", method: "GET", url: EVENTS },
  { name: "list, a page size too large", method: "GET", url: `${EVENTS}?pagesize=100000` },
  {
    name: "list, filtered and ordered",
    method: "GET",
    url: `${EVENTS}?filter=name%20eq%20%22Precompiled%22&order=-startsAt`,
  },
  { name: "read one", method: "GET", url: `${EVENTS}/P1` },
  { name: "read one, not there", method: "GET", url: `${EVENTS}/NOPE` },
  {
    name: "replace, a missing name",
    method: "PUT",
    url: `${EVENTS}/P1`,
    body: { code: "P1", startsAt: "2027-01-10T09:00:00Z" },
  },
  { name: "users", method: "GET", url: "/Resources/Users" },
  { name: "users, a filter that does not parse", method: "GET", url: "/Resources/Users?filter=userName%20eq" },
  { name: "no such route", method: "GET", url: "/nowhere" },
];

/** A body without the fields that differ from one request to the next. */
function comparable(payload: string): unknown {
  if (payload === "") return "";
  return JSON.parse(payload, (key, value) =>
    ["createdAt", "updatedAt", "expiresAt", "token", "requestId", "instance", "lastLogin", "id"].includes(key)
      ? "(varies)"
      : value,
  );
}

let dataDir: string;
let bundle: ServerBundle;
let fromBundle: BuiltApp;
let fromSources: BuiltApp;
let token: string;

beforeAll(async () => {
  const { loadBundle } = createRequire(import.meta.url)(join(dist, "code-cache.cjs"));
  vi.stubEnv("NODE_DISABLE_COMPILE_CACHE", "1");
  bundle = loadBundle(dist, "server") as ServerBundle;
  dataDir = await makeDataDir();
  await bundle.initInstance({ dataDir, adminUser: ADMIN_USER, password: ADMIN_PASSWORD });
  const options = { dataDir, log: false as const, compileSchemasOnFirstUse: true, requireInitialised: true };
  fromBundle = await bundle.buildApp(options);
  fromSources = await buildApp(options);
  const login = await fromSources.inject({
    method: "POST",
    url: "/auth/login",
    payload: { userName: ADMIN_USER, password: ADMIN_PASSWORD },
  });
  token = login.json().token;
});

afterAll(async () => {
  // test files share a worker's process: its environment goes back as it was
  vi.unstubAllEnvs();
  await fromBundle?.close();
  await fromSources?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe("the bundle's precompiled schemas answer as schemas compiled at run time", () => {
  it.each(SCENARIOS)("$name", async (scenario) => {
    const answers = [];
    for (const app of [fromBundle, fromSources]) {
      const response = await app.inject({
        method: scenario.method,
        url: scenario.url,
        ...(scenario.body !== undefined && { payload: scenario.body as object }),
        headers: scenario.anonymous ? {} : { authorization: `Bearer ${token}` },
      });
      answers.push({
        status: response.statusCode,
        type: response.headers["content-type"],
        body: comparable(response.payload),
      });
      // the second create of the same code would be a conflict: the sources' app creates its own
      if (scenario.name === "create an event") {
        await fromBundle.inject({
          method: "DELETE",
          url: `${EVENTS}/P1`,
          headers: { authorization: `Bearer ${token}` },
        });
      }
    }
    expect(answers[0]).toEqual(answers[1]);
  });

  it("compiled no schema at run time, and took the build's", () => {
    const counts = bundle.schemaCompilations();
    expect(counts.atRunTime).toBe(0);
    expect(counts.precompiled).toBeGreaterThan(10);
  });
});
