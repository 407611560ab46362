/**
 * RFC 5849 section 3.4: the signature base string, the parameter normalisation and the three
 * signature methods, written against the RFC (the oauth-1.0a package only signs, client-side).
 * Pure functions: no request, no database, no clock.
 */
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { OAuthSignatureMethod } from "../../contract/oauth.js";

/** One name/value pair; a name may repeat, so parameters are a list, never a map. */
export type Param = readonly [name: string, value: string];

export class OAuthSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OAuthSyntaxError";
  }
}

/** Section 3.6: every octet of the UTF-8 form but ALPHA, DIGIT, `-`, `.`, `_` and `~` as `%XX` (upper case). */
export function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function percentDecode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new OAuthSyntaxError(`${what} is not valid percent-encoded UTF-8.`);
  }
}

/**
 * An `application/x-www-form-urlencoded` string (a form body, or a query string as section
 * 3.4.1.3.1 says to read it): `+` is a space, every pair is kept in order, `name` alone has an
 * empty value. Invalid percent-encoding or UTF-8 is an OAuthSyntaxError.
 */
export function parseForm(text: string, what = "The form"): Param[] {
  const params: Param[] = [];
  for (const part of text.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? "" : part.slice(eq + 1);
    params.push([percentDecode(name.replace(/\+/g, " "), what), percentDecode(value.replace(/\+/g, " "), what)]);
  }
  return params;
}

const HEADER_PARAM = /[ \t]*([^\s=,"]+)[ \t]*=[ \t]*"([^"]*)"[ \t]*(?:,|$)/y;

/**
 * Section 3.5.1: the parameters of an `Authorization: OAuth ...` header, percent-decoded, without
 * `realm`. Undefined when the header is not of the OAuth scheme; OAuthSyntaxError when malformed.
 */
export function parseAuthorizationHeader(header: string | undefined): Param[] | undefined {
  if (!header) return undefined;
  const scheme = /^OAuth(?:[ \t]+|$)/i.exec(header);
  if (!scheme) return undefined;
  const text = header.slice(scheme[0].length).trimEnd();
  const params: Param[] = [];
  HEADER_PARAM.lastIndex = 0;
  while (HEADER_PARAM.lastIndex < text.length) {
    const at = HEADER_PARAM.lastIndex;
    const match = HEADER_PARAM.exec(text);
    if (!match || match.index !== at) {
      throw new OAuthSyntaxError("The Authorization header is not 'OAuth name=\"value\", ...'.");
    }
    const name = percentDecode(match[1]!, "The Authorization header");
    if (name === "realm") continue;
    params.push([name, percentDecode(match[2]!, "The Authorization header")]);
  }
  return params;
}

/**
 * Section 3.4.1.2: scheme and host in lower case, the port only when it is not the scheme's
 * default, the path as requested, no query and no fragment.
 */
export function baseStringUri(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new OAuthSyntaxError(`'${url}' is not an absolute URL.`);
  }
  // URL lower-cases scheme and host and drops the default port of http and https
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}

const byBytes = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Section 3.4.1.3.2: every parameter but `oauth_signature`, names and values encoded, sorted by
 * encoded name then encoded value (plain string order is byte order: they are ASCII now).
 */
export function normalizeParameters(params: readonly Param[]): string {
  return params
    .filter(([name]) => name !== "oauth_signature")
    .map(([name, value]) => [percentEncode(name), percentEncode(value)] as const)
    .sort(([an, av], [bn, bv]) => byBytes(an, bn) || byBytes(av, bv))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
}

/** Section 3.4.1: `METHOD&encoded base string URI&encoded normalized parameters`. */
export function signatureBaseString(method: string, url: string, params: readonly Param[]): string {
  return [method.toUpperCase(), percentEncode(baseStringUri(url)), percentEncode(normalizeParameters(params))].join(
    "&",
  );
}

export interface SigningInput {
  method: string;
  /** the absolute URL the request was sent to (its query is ignored here: pass query parameters in `params`) */
  url: string;
  /** every parameter of the request: header (without realm), query and form body */
  params: readonly Param[];
  signatureMethod: OAuthSignatureMethod;
  consumerSecret: string;
  /** the token's shared secret; empty when the request carries no token */
  tokenSecret?: string;
}

/** Sections 3.4.2 to 3.4.4: the signature a client holding these secrets would send. */
export function computeSignature(input: SigningInput): string {
  const key = `${percentEncode(input.consumerSecret)}&${percentEncode(input.tokenSecret ?? "")}`;
  if (input.signatureMethod === "PLAINTEXT") return key;
  const hash = input.signatureMethod === "HMAC-SHA256" ? "sha256" : "sha1";
  const base = signatureBaseString(input.method, input.url, input.params);
  return createHmac(hash, key).update(base, "utf8").digest("base64");
}

/** Equality in constant time whatever the lengths (both sides are hashed first). */
export function constantTimeEqual(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** Whether `signature` (decoded, as sent in `oauth_signature`) is the right one for these secrets. */
export function verifySignature(input: SigningInput & { signature: string }): boolean {
  return constantTimeEqual(computeSignature(input), input.signature);
}
