/**
 * The dummy hash an unknown user's login is verified against must cost what a real one costs:
 * the same argon2 parameters as the hashes the server writes.
 */
import argon2 from "argon2";
import { describe, expect, it } from "vitest";
import { DUMMY_HASH, HASH_OPTIONS, hashPassword } from "../../src/server/services/passwords.js";

describe("the dummy hash of unknown-user logins", () => {
  it("has the parameters of the hashes the server writes", async () => {
    expect(argon2.needsRehash(DUMMY_HASH, HASH_OPTIONS)).toBe(false);
    // and the check above would notice a difference
    expect(argon2.needsRehash(DUMMY_HASH, { ...HASH_OPTIONS, timeCost: HASH_OPTIONS.timeCost + 1 })).toBe(true);
    const real = await hashPassword("some password of a real user 1");
    expect(real.split("$").slice(0, 4)).toEqual(DUMMY_HASH.split("$").slice(0, 4));
  });
});
