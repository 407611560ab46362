import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bearerToken, isOAuthHeader } from "../../src/server/plugins/authenticate.js";

/** The hot path reads the Authorization header without regular expressions; it must accept exactly what they did. */
const BEARER = /^Bearer +([^ ]+) *$/i;
const OAUTH = /^OAuth(?:[ \t]|$)/i;

// headers built from the pieces that matter (scheme spellings, spaces, tabs, odd characters) and any text
const piece = fc.constantFrom(
  "Bearer",
  "bearer",
  "BEARER",
  "BeArEr",
  "Bearer\u0000",
  "OAuth",
  "oauth",
  "OAUTHX",
  "Bearerx",
  "Ｂearer",
  "K",
  "\u212a",
  " ",
  "  ",
  "\t",
  "\u0000",
  "a.b.c",
  "=",
  "x y",
  "",
);
const header = fc.oneof(
  fc.array(piece, { maxLength: 6 }).map((parts) => parts.join("")),
  fc.string(),
  fc.string({ unit: "grapheme" }),
);

describe("the Authorization header, read without regular expressions", () => {
  it("gives the Bearer token exactly when /^Bearer +([^ ]+) *$/i does", () => {
    fc.assert(
      fc.property(header, (value) => {
        expect(bearerToken(value)).toBe(BEARER.exec(value)?.[1]);
      }),
      { numRuns: 5000 },
    );
    for (const value of [
      "Bearer abc",
      "bearer   abc  ",
      "BEARER a\tb",
      "Bearer",
      "Bearer ",
      "Bearer a b",
      "Bearerabc",
      "Bearer\u0000abc",
    ]) {
      expect(bearerToken(value), JSON.stringify(value)).toBe(BEARER.exec(value)?.[1]);
    }
  });

  it("tells an OAuth header exactly when /^OAuth(?:[ \\t]|$)/i does", () => {
    fc.assert(
      fc.property(header, (value) => {
        expect(isOAuthHeader(value)).toBe(OAUTH.test(value));
      }),
      { numRuns: 5000 },
    );
    for (const value of ["OAuth", "oauth realm=x", "OAUTH\tx", "OAuthx", "OAut", "OAuth\u0000"]) {
      expect(isOAuthHeader(value), JSON.stringify(value)).toBe(OAUTH.test(value));
    }
  });
});
