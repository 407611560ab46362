import { readdir, rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import { rotateKeyInstance } from "../../src/server/offline-tasks.js";
import { createTestDatabase, TEST_SECRET_KEY } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, ADMIN_USER, bearer, loginToken, makeDataDir, useTestServer } from "../helpers/server.js";

/** Signing keys shared through the database under the deployment secret (issue: scale-out, part 1). */

const isLogged = async (app: BuiltApp, token: string) =>
  (await app.inject({ method: "GET", url: "/auth/isLogged", headers: bearer(token) })).statusCode;

describe("a deployment secret is required where keys must be shared, and checked at start", () => {
  const CASES: { name: string; options: () => Promise<{ databaseUrl?: string; secretKey?: string }>; error: RegExp }[] =
    [
      {
        name: "PostgreSQL without a secret",
        options: async () => ({ databaseUrl: database.url }),
        error: /On PostgreSQL the signing keys live in the database.*BIZCTL_SECRET_KEY.*openssl rand -base64 32/,
      },
      {
        name: "a secret that is not 32 bytes of base64",
        options: async () => ({ secretKey: "c2hvcnQ=" }),
        error: /32 random bytes in base64/,
      },
      {
        name: "a secret that is not base64 at all",
        options: async () => ({ secretKey: "not base64 at all!" }),
        error: /32 random bytes in base64/,
      },
    ];
  let database: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => database?.drop());

  for (const { name, options, error } of CASES)
    it(`refuses ${name}`, async () => {
      const dataDir = await makeDataDir();
      try {
        await expect(buildApp({ log: false, dataDir, ...(await options()) })).rejects.toMatchObject({
          name: "ConfigurationError",
          message: expect.stringMatching(error),
        });
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    });
});

describe("an embedded install that adds a secret later (SQLite)", () => {
  const server = useTestServer({ login: false });

  it("moves its key files into the database, and tokens signed before keep working", async () => {
    const before = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    await server.app.close();
    const withSecret = await buildApp({ log: false, dataDir: server.dataDir, secretKey: TEST_SECRET_KEY });
    try {
      expect(await isLogged(withSecret, before)).toBe(200);
      const rows = await withSecret.services.store.db.selectFrom("signing_keys").select("kid").execute();
      expect(rows.map((r) => `${r.kid}.json`)).toEqual(await readdir(`${server.dataDir}/keys`));
    } finally {
      await withSecret.close();
    }
    // from now on the secret is needed: without it the server would sign with keys nobody else has
    await expect(buildApp({ log: false, dataDir: server.dataDir })).rejects.toMatchObject({
      name: "ConfigurationError",
      message: expect.stringMatching(/keeps its signing keys in the database/),
    });
    const wrong = Buffer.alloc(32, 1).toString("base64");
    await expect(buildApp({ log: false, dataDir: server.dataDir, secretKey: wrong })).rejects.toMatchObject({
      name: "ConfigurationError",
      message: expect.stringMatching(/does not open the signing key/),
    });
  });
});

describe("two instances on one PostgreSQL database, each with its own data dir", () => {
  let database: { url: string; drop: () => Promise<void> };
  let b: BuiltApp;
  let bDataDir: string;
  // runs after A has closed (hooks after the last test run last to first)
  afterAll(async () => {
    await b?.close();
    await rm(bDataDir, { recursive: true, force: true });
    await database?.drop();
  });
  const a = useTestServer(async () => {
    database = await createTestDatabase();
    return { databaseUrl: database.url, secretKey: TEST_SECRET_KEY, login: false };
  });
  beforeAll(async () => {
    bDataDir = await makeDataDir();
    b = await buildApp({ log: false, dataDir: bDataDir, databaseUrl: database.url, secretKey: TEST_SECRET_KEY });
  });

  it("accept each other's tokens, and a logout on one is refused on the other at once", async () => {
    const token = await loginToken(a.app, ADMIN_USER, ADMIN_PASSWORD);
    expect(await isLogged(b, token)).toBe(200);
    const fromB = await loginToken(b, ADMIN_USER, ADMIN_PASSWORD);
    expect(await isLogged(a.app, fromB)).toBe(200);
    expect((await a.app.inject({ method: "POST", url: "/auth/logout", headers: bearer(fromB) })).statusCode).toBe(204);
    expect(await isLogged(b, fromB)).toBe(401);
  });

  it("a key rotated through one signs tokens the other accepts, with no restart", async () => {
    const rotated = await rotateKeyInstance({
      dataDir: a.dataDir,
      databaseUrl: database.url,
      secretKey: TEST_SECRET_KEY,
      publishSeconds: 0,
      tokenTtlSeconds: 3600,
    });
    expect(rotated.storage).toMatch(/database/);
    // A picks the key up on its next periodic read; B has not read it yet
    await a.app.services.keys.reload();
    const token = await loginToken(a.app, ADMIN_USER, ADMIN_PASSWORD);
    expect(JSON.parse(Buffer.from(token.split(".")[0]!, "base64url").toString()).kid).toBe(rotated.kid);
    expect(await isLogged(b, token)).toBe(200);
    expect(b.services.keys.jwks().keys.map((k) => k.kid)).toContain(rotated.kid);
  });
});
