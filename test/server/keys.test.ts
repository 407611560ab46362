import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { databaseKeyStorage, fileKeyStorage, type KeyStorage } from "../../src/server/services/key-storage.js";
import { KeyRing, rotateKeys } from "../../src/server/services/keys.js";
import { openStore, type Store } from "../../src/server/store/database.js";
import { migrateToLatest } from "../../src/server/store/migrator.js";

const TTL = 8 * 3600;
const SECRET = Buffer.alloc(32, 7);
let root: string;
let now: Date;
let store: Store | undefined;
const clock = () => now;
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const claims = { sub: "user-1", jti: "session-1", roles: ["admin"] };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "bizctl-keys-"));
  now = new Date("2027-01-10T09:00:00Z");
});
afterEach(async () => {
  await store?.close();
  store = undefined;
  await rm(root, { recursive: true, force: true });
});

/** The two places keys live; every rule of the ring holds for both. */
const STORAGES: { name: string; open: () => Promise<KeyStorage> }[] = [
  { name: "files", open: async () => fileKeyStorage(join(root, "keys")) },
  {
    name: "the database",
    open: async () => {
      store ??= await openStore({ dataDir: root });
      await migrateToLatest(store.db, store.dialect);
      return databaseKeyStorage(store, SECRET);
    },
  },
];

describe("signing keys in files", () => {
  it("are created on first use, private, and published without their private part", async () => {
    const ring = await KeyRing.open(fileKeyStorage(join(root, "keys")), clock);
    const [file] = await readdir(join(root, "keys"));
    expect(((await stat(join(root, "keys", file as string))).mode & 0o777).toString(8)).toBe("600");
    const { keys } = ring.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
  });
});

describe("signing keys in the database", () => {
  it("keep the private part sealed: the row holds neither the JWK nor its private scalar", async () => {
    const storage = await STORAGES[1]!.open();
    await KeyRing.open(storage, clock);
    const [key] = await storage.list();
    const rows = await store!.db.selectFrom("signing_keys").selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.sealed_private_jwk).not.toContain(key!.privateJwk.d);
    expect(rows[0]!.sealed_private_jwk).not.toContain("P-256");
  });

  it("a different secret does not open them, and says so", async () => {
    await KeyRing.open(await STORAGES[1]!.open(), clock);
    const other = databaseKeyStorage(store!, Buffer.alloc(32, 8));
    await expect(KeyRing.open(other, clock)).rejects.toMatchObject({
      name: "ConfigurationError",
      message: expect.stringMatching(/secret key does not open the signing key/),
    });
  });
});

describe.each(STORAGES)("signing keys in $name", ({ open }) => {
  it("rotate: the new key is published at once, signs only from signFrom, and the old one keeps verifying", async () => {
    const ring = await KeyRing.open(await open(), clock);
    const before = (await ring.sign(claims, TTL)).token;
    const rotated = await rotateKeys(await open(), now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    await ring.reload();
    expect(ring.jwks().keys.map((k) => k.kid)).toContain(rotated.kid);
    expect(kidOf((await ring.sign(claims, TTL)).token)).toBe(kidOf(before));

    now = new Date(now.getTime() + 601_000);
    const after = (await ring.sign(claims, TTL)).token;
    expect(kidOf(after)).toBe(rotated.kid);
    await expect(ring.verify(before)).resolves.toMatchObject({ sub: "user-1" });
    await expect(ring.verify(after)).resolves.toMatchObject({ sub: "user-1" });
  });

  it("another instance verifies a token signed with a key it has not loaded yet", async () => {
    const signer = await KeyRing.open(await open(), clock);
    const verifier = await KeyRing.open(await open(), clock);
    now = new Date(now.getTime() + 1000);
    const rotated = await rotateKeys(await open(), now, { publishSeconds: 0, tokenTtlSeconds: TTL });
    await signer.reload();
    const token = (await signer.sign(claims, TTL)).token;
    expect(kidOf(token)).toBe(rotated.kid);
    await expect(verifier.verify(token)).resolves.toMatchObject({ jti: "session-1" });
  });

  it("a key retires only once no token it signed can still be valid", async () => {
    const first = (await KeyRing.open(await open(), clock)).jwks().keys[0]!.kid;
    const second = await rotateKeys(await open(), now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(second.removed).toEqual([]);
    // the second key signs from +10 min; tokens of the first expire at most 8 h after that
    now = new Date(now.getTime() + 600_000 + TTL * 1000 - 1000);
    const middle = await rotateKeys(await open(), now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(middle.removed).toEqual([]);
    now = new Date(now.getTime() + 2000);
    const third = await rotateKeys(await open(), now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(third.removed).toEqual([first]);
    const ring = await KeyRing.open(await open(), clock);
    expect(
      ring
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([second.kid, middle.kid, third.kid].sort());
  });

  it("refuses a made-up kid without failing the request path", async () => {
    const ring = await KeyRing.open(await open(), clock);
    const token = (await ring.sign(claims, TTL)).token;
    const [header, payload, signature] = token.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(header as string, "base64url").toString()), kid: "nope" }),
    ).toString("base64url");
    await expect(ring.verify(`${forged}.${payload}.${signature}`)).rejects.toMatchObject({ code: "token_invalid" });
  });
});
