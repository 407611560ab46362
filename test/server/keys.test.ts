import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodeProtectedHeader } from "jose";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeyRing, rotateKeys } from "../../src/server/services/keys.js";

const TTL = 8 * 3600;
let dir: string;
let now: Date;
const clock = () => now;
const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const claims = { sub: "user-1", jti: "session-1", roles: ["admin"] };

beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), "bizctl-keys-")), "keys");
  now = new Date("2027-01-10T09:00:00Z");
});
afterEach(async () => rm(join(dir, ".."), { recursive: true, force: true }));

describe("signing keys", () => {
  it("are created on first use, private, and published without their private part", async () => {
    const ring = await KeyRing.open(dir, clock);
    const [file] = await readdir(dir);
    expect(((await stat(join(dir, file as string))).mode & 0o777).toString(8)).toBe("600");
    const { keys } = ring.jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: "EC", crv: "P-256", alg: "ES256", use: "sig" });
    expect(keys[0]).not.toHaveProperty("d");
  });

  it("rotate: the new key is published at once, signs only from signFrom, and the old one keeps verifying", async () => {
    const ring = await KeyRing.open(dir, clock);
    const before = (await ring.sign(claims, TTL)).token;
    const rotated = await rotateKeys(dir, now, { publishSeconds: 600, tokenTtlSeconds: TTL });
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
    const signer = await KeyRing.open(dir, clock);
    const verifier = await KeyRing.open(dir, clock);
    now = new Date(now.getTime() + 1000);
    const rotated = await rotateKeys(dir, now, { publishSeconds: 0, tokenTtlSeconds: TTL });
    await signer.reload();
    const token = (await signer.sign(claims, TTL)).token;
    expect(kidOf(token)).toBe(rotated.kid);
    await expect(verifier.verify(token)).resolves.toMatchObject({ jti: "session-1" });
  });

  it("a key retires only once no token it signed can still be valid", async () => {
    await KeyRing.open(dir, clock);
    const [first] = await readdir(dir);
    const second = await rotateKeys(dir, now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(second.removed).toEqual([]);
    // the second key signs from +10 min; tokens of the first expire at most 8 h after that
    now = new Date(now.getTime() + 600_000 + TTL * 1000 - 1000);
    const middle = await rotateKeys(dir, now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(middle.removed).toEqual([]);
    now = new Date(now.getTime() + 2000);
    const third = await rotateKeys(dir, now, { publishSeconds: 600, tokenTtlSeconds: TTL });
    expect(third.removed).toEqual([(first as string).replace(/\.json$/, "")]);
    const ring = await KeyRing.open(dir, clock);
    expect(
      ring
        .jwks()
        .keys.map((k) => k.kid)
        .sort(),
    ).toEqual([second.kid, middle.kid, third.kid].sort());
  });

  it("refuses a made-up kid without failing the request path", async () => {
    const ring = await KeyRing.open(dir, clock);
    const token = (await ring.sign(claims, TTL)).token;
    const [header, payload, signature] = token.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(header as string, "base64url").toString()), kid: "nope" }),
    ).toString("base64url");
    await expect(ring.verify(`${forged}.${payload}.${signature}`)).rejects.toMatchObject({ code: "token_invalid" });
  });
});
