/**
 * The OAuth 1.0a provider (RFC 5849): the published signature vectors against our verifier.
 */
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  baseStringUri,
  computeSignature,
  normalizeParameters,
  type Param,
  parseAuthorizationHeader,
  parseForm,
  percentEncode,
  signatureBaseString,
  verifySignature,
} from "../../src/server/oauth1/signature.js";
import { RFC_EXAMPLE, signer } from "../helpers/oauth.js";

// ---------------------------------------------------------------------------------------------
// published vectors

/** RFC 5849 section 1.2: the client credentials, and the three requests of the worked example. */
const RFC = {
  consumerSecret: "kd94hf93k423kf44",
  temporarySecret: "hdhd0244k9j7ao03",
  tokenSecret: "pfkkdhi9sl3r4s00",
  initiate: {
    method: "POST",
    url: "https://photos.example.net/initiate",
    header:
      'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_signature_method="HMAC-SHA1", ' +
      'oauth_timestamp="137131200", oauth_nonce="wIjqoS", oauth_callback="http%3A%2F%2Fprinter.example.com%2Fready", ' +
      'oauth_signature="74KNZJeDHnMBp0EMJ9ZHt%2FXKycU%3D"',
    query: "",
  },
  token: {
    method: "POST",
    url: "https://photos.example.net/token",
    header:
      'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="hh5s93j4hdidpola", ' +
      'oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="walatlh", ' +
      'oauth_verifier="hfdp7dh39dks9884", oauth_signature="gKgrFCywp7rO0OXSjdot%2FIHF7IU%3D"',
    query: "",
  },
  photos: {
    method: "GET",
    url: "http://photos.example.net/photos",
    header:
      'OAuth realm="Photos", oauth_consumer_key="dpf43f3p2l4k3l03", oauth_token="nnch734d00sl2jdk", ' +
      'oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131202", oauth_nonce="chapoH", ' +
      'oauth_signature="MdpQcU8iPSUjWoN%2FUDMsK2sui9I%3D"',
    query: "file=vacation.jpg&size=original",
  },
} as const;

type Vector = (typeof RFC)["initiate" | "token" | "photos"];

function paramsOf(vector: Vector): Param[] {
  return [...parseAuthorizationHeader(vector.header)!, ...parseForm(vector.query)];
}

function signatureOf(params: Param[]): string {
  return params.find(([name]) => name === "oauth_signature")![1];
}

function verifies(vector: Vector, params: Param[], overrides: { method?: string; url?: string } = {}, secret?: string) {
  return verifySignature({
    method: overrides.method ?? vector.method,
    url: overrides.url ?? vector.url,
    params: params.filter(([name]) => name !== "oauth_signature"),
    signatureMethod: "HMAC-SHA1",
    consumerSecret: RFC.consumerSecret,
    tokenSecret: secret,
    signature: signatureOf(params),
  });
}

describe("RFC 5849 section 1.2 worked example, against our verifier", () => {
  const cases = [
    ["temporary credentials request", RFC.initiate, undefined],
    ["token credentials request", RFC.token, RFC.temporarySecret],
    ["protected resource request", RFC.photos, RFC.tokenSecret],
  ] as const;

  it.each(cases)("accepts exactly the printed signature of the %s", (_name, vector, secret) => {
    const params = paramsOf(vector);
    expect(verifies(vector, params, {}, secret)).toBe(true);
    expect(
      computeSignature({
        method: vector.method,
        url: vector.url,
        params,
        signatureMethod: "HMAC-SHA1",
        consumerSecret: RFC.consumerSecret,
        tokenSecret: secret,
      }),
    ).toBe(signatureOf(params));
  });

  it.each(cases)(
    "refuses the %s with any one parameter, the method, the URL or a secret changed",
    (_n, vector, secret) => {
      const params = paramsOf(vector);
      for (let i = 0; i < params.length; i++) {
        const [name, value] = params[i]!;
        if (name === "oauth_signature") continue;
        const changed = params.map((p, j) => (j === i ? ([name, `${value}x`] as const) : p));
        expect(verifies(vector, changed, {}, secret), `${name} changed`).toBe(false);
        const renamed = params.map((p, j) => (j === i ? ([`${name}x`, value] as const) : p));
        expect(verifies(vector, renamed, {}, secret), `${name} renamed`).toBe(false);
        const dropped = params.filter((_p, j) => j !== i);
        expect(verifies(vector, dropped, {}, secret), `${name} dropped`).toBe(false);
      }
      expect(verifies(vector, [...params, ["extra", ""]], {}, secret), "a parameter added").toBe(false);
      expect(verifies(vector, params, { method: vector.method === "GET" ? "POST" : "GET" }, secret)).toBe(false);
      expect(verifies(vector, params, { url: vector.url.replace("photos.example.net", "example.net") }, secret)).toBe(
        false,
      );
      expect(verifies(vector, params, { url: `${vector.url}/` }, secret)).toBe(false);
      expect(
        verifies(
          vector,
          params,
          { url: vector.url.replace(/^https?/, (s) => (s === "http" ? "https" : "http")) },
          secret,
        ),
      ).toBe(false);
      expect(verifies(vector, params, {}, `${secret ?? ""}x`)).toBe(false);
      const wrongConsumer = verifySignature({
        method: vector.method,
        url: vector.url,
        params,
        signatureMethod: "HMAC-SHA1",
        consumerSecret: `${RFC.consumerSecret}x`,
        tokenSecret: secret,
        signature: signatureOf(params),
      });
      expect(wrongConsumer).toBe(false);
    },
  );

  it("ignores realm and reads the printed header as the RFC does", () => {
    const params = parseAuthorizationHeader(RFC.initiate.header)!;
    expect(params.map(([name]) => name)).not.toContain("realm");
    expect(Object.fromEntries(params).oauth_callback).toBe("http://printer.example.com/ready");
    expect(Object.fromEntries(params).oauth_signature).toBe("74KNZJeDHnMBp0EMJ9ZHt/XKycU=");
  });
});

describe("RFC 5849 section 3.4.1.1 signature base string", () => {
  const { params, baseString: printed } = RFC_EXAMPLE;

  it("comes out byte for byte as printed", () => {
    expect(signatureBaseString("POST", "http://example.com/request", params)).toBe(printed);
  });

  it("normalises the parameters as section 3.4.1.3.2 prints them", () => {
    expect(normalizeParameters(params)).toBe(
      "a2=r%20b&a3=2%20q&a3=a&b5=%3D%253D&c%40=&c2=&oauth_consumer_key=9djdj82h48djs9d2&oauth_nonce=7d8f3e4a&" +
        "oauth_signature_method=HMAC-SHA1&oauth_timestamp=137131201&oauth_token=kkk9d7dh3k39sjv7",
    );
  });

  it("signs that base string with HMAC-SHA1 (the printed signature is a known erratum, so it is computed)", () => {
    // the example gives no secrets; any pair shows that the signature is the HMAC of exactly this text
    const consumerSecret = "j49sk3j29djd";
    const tokenSecret = "dh893hdasih9";
    const expected = createHmac("sha1", `${consumerSecret}&${tokenSecret}`).update(printed).digest("base64");
    const input = {
      method: "POST",
      url: "http://example.com/request",
      params,
      signatureMethod: "HMAC-SHA1" as const,
      consumerSecret,
      tokenSecret,
    };
    expect(computeSignature(input)).toBe(expected);
    expect(verifySignature({ ...input, signature: expected })).toBe(true);
    expect(verifySignature({ ...input, signature: "bYT5CMsGcbgUdFHObYMEfcx6bsw=" })).toBe(false);
  });

  it("builds base string URIs as section 3.4.1.2 shows", () => {
    expect(baseStringUri("HTTP://EXAMPLE.COM:80/r%20v/X?id=123")).toBe("http://example.com/r%20v/X");
    expect(baseStringUri("https://www.example.net:8080/?q=1")).toBe("https://www.example.net:8080/");
    expect(baseStringUri("https://Example.com:443/a")).toBe("https://example.com/a");
    expect(baseStringUri("http://example.com:8080/a")).toBe("http://example.com:8080/a");
  });

  it("percent-encodes as section 3.6 says (unreserved kept, UTF-8, upper-case hex)", () => {
    expect(percentEncode("AZaz09-._~")).toBe("AZaz09-._~");
    expect(percentEncode("!*'() +/=&%")).toBe("%21%2A%27%28%29%20%2B%2F%3D%26%25");
    expect(percentEncode("é☃")).toBe("%C3%A9%E2%98%83");
  });
});

describe("further published vectors", () => {
  it("verifies the Twitter/X 'Creating a signature' example (HMAC-SHA1), as oauth-1.0a's test data reproduces it", () => {
    // developer.x.com "Creating a signature"; the same values in node_modules/oauth-1.0a/test/twitter_sample_data.js
    const params: Param[] = [
      ["include_entities", "true"],
      ["status", "Hello Ladies + Gentlemen, a signed OAuth request!"],
      ["oauth_consumer_key", "xvz1evFS4wEEPTGEFPHBog"],
      ["oauth_nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"],
      ["oauth_signature_method", "HMAC-SHA1"],
      ["oauth_timestamp", "1318622958"],
      ["oauth_token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"],
      ["oauth_version", "1.0"],
    ];
    const url = "https://api.twitter.com/1/statuses/update.json";
    expect(signatureBaseString("POST", url, params)).toBe(
      "POST&https%3A%2F%2Fapi.twitter.com%2F1%2Fstatuses%2Fupdate.json&include_entities%3Dtrue%26oauth_consumer_key%3Dxvz1evFS4wEEPTGEFPHBog%26oauth_nonce%3DkYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1318622958%26oauth_token%3D370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb%26oauth_version%3D1.0%26status%3DHello%2520Ladies%2520%252B%2520Gentlemen%252C%2520a%2520signed%2520OAuth%2520request%2521",
    );
    const input = {
      method: "POST",
      url,
      params,
      signatureMethod: "HMAC-SHA1" as const,
      consumerSecret: "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
      tokenSecret: "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
    };
    expect(verifySignature({ ...input, signature: "tnnArxj06cWHq44gCs1OSKk/jLY=" })).toBe(true);
    // the form body as sent on the wire (`+` for a space, `%2B` for the plus) gives the same parameters
    expect(parseForm("status=Hello+Ladies+%2B+Gentlemen%2C+a+signed+OAuth+request%21")).toEqual([
      ["status", "Hello Ladies + Gentlemen, a signed OAuth request!"],
    ]);
  });

  it("agrees with the oauth-1.0a package on HMAC-SHA1 and HMAC-SHA256, repeated names included", () => {
    for (const method of ["HMAC-SHA1", "HMAC-SHA256"] as const) {
      const consumer = { key: "ck", secret: "cs&%x" };
      const token = { token: "tk", secret: "ts é" };
      const oauth = signer(consumer, method);
      const request = { method: "GET", url: "http://example.com/p/a%20th", data: { b: ["2", "1"], a: "x y" } };
      const signed = oauth.authorize(
        { ...request, data: { ...request.data } },
        { key: token.token, secret: token.secret },
      );
      const params: Param[] = [
        ["b", "2"],
        ["b", "1"],
        ["a", "x y"],
        ...Object.entries(signed)
          .filter(([name]) => name.startsWith("oauth_") && name !== "oauth_signature")
          .map(([name, value]) => [name, String(value)] as const),
      ];
      expect(
        verifySignature({
          method: "GET",
          url: "http://example.com/p/a%20th",
          params,
          signatureMethod: method,
          consumerSecret: consumer.secret,
          tokenSecret: token.secret,
          signature: signed.oauth_signature,
        }),
        method,
      ).toBe(true);
    }
  });

  it("computes PLAINTEXT as the encoded secrets joined by '&' (section 3.4.4)", () => {
    const input = { method: "GET", url: "https://x.test/", params: [], consumerSecret: "a b", tokenSecret: "c&d" };
    expect(computeSignature({ ...input, signatureMethod: "PLAINTEXT" })).toBe("a%20b&c%26d");
    expect(computeSignature({ ...input, signatureMethod: "PLAINTEXT", tokenSecret: undefined })).toBe("a%20b&");
  });

  it("refuses malformed Authorization headers and bad percent-encoding", () => {
    expect(parseAuthorizationHeader("Bearer abc")).toBeUndefined();
    expect(() => parseAuthorizationHeader('OAuth oauth_nonce="a" oauth_token="b"')).toThrow();
    expect(() => parseAuthorizationHeader("OAuth oauth_nonce=a")).toThrow();
    expect(() => parseAuthorizationHeader('OAuth oauth_nonce="%E0%A4%A"')).toThrow();
    expect(() => parseForm("a=%ff")).toThrow();
    expect(parseAuthorizationHeader('oauth  oauth_nonce = "a" ,oauth_token="b",')).toEqual([
      ["oauth_nonce", "a"],
      ["oauth_token", "b"],
    ]);
  });
});
