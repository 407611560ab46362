import { describe, expect, it } from "vitest";
import { parseSecretKey, seal, unseal } from "../../src/server/secret-box.js";

const KEY = Buffer.alloc(32, 3);
const sealed = seal(KEY, '{"d":"private"}', "kid-1");

describe("the secret box (AES-256-GCM)", () => {
  it("opens what it sealed, and hides it", () => {
    expect(unseal(KEY, sealed, "kid-1")).toBe('{"d":"private"}');
    expect(sealed).not.toContain("private");
    expect(seal(KEY, '{"d":"private"}', "kid-1")).not.toBe(sealed);
  });

  const TAMPERED: { name: string; key?: Buffer; value?: string; context?: string }[] = [
    { name: "another key", key: Buffer.alloc(32, 4) },
    { name: "another context (the value copied to another kid)", context: "kid-2" },
    {
      name: "a changed ciphertext",
      value: sealed.replace(/\.([A-Za-z0-9_-])([^.]*)$/, (_m, c, rest) => `.${c === "A" ? "B" : "A"}${rest}`),
    },
    { name: "a cut value", value: sealed.split(".").slice(0, 3).join(".") },
    { name: "an unknown version", value: sealed.replace(/^v1\./, "v9.") },
    { name: "garbage", value: "not sealed at all" },
  ];
  for (const { name, key = KEY, value = sealed, context = "kid-1" } of TAMPERED)
    it(`refuses ${name}`, () => {
      expect(unseal(key, value, context)).toBeUndefined();
    });

  it("takes a secret of 32 bytes in base64, with surrounding white space (a file's newline)", () => {
    expect(parseSecretKey(`${KEY.toString("base64")}\n`)).toEqual(KEY);
    for (const bad of ["", "c2hvcnQ=", Buffer.alloc(33).toString("base64"), "!!!!"]) {
      expect(() => parseSecretKey(bad), bad).toThrow(/32 random bytes in base64/);
    }
  });
});
