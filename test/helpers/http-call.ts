/**
 * Requests over a listening test server's socket (real HTTP, undici), each with the Authorization
 * header a caller makes for it (a Bearer token, an OAuth 1.0a signature), JSON in and out.
 */
import { expect } from "vitest";
import { authHeader, type Credentials, signer } from "./oauth.js";
import { PATCH_OP } from "./scim.js";
import { overHttp } from "./server.js";

export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json(): Record<string, unknown>;
}

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type HttpCall = (method: Method, path: string, body?: unknown) => Promise<Answer>;

/** Requests to the server at `base`, each with the Authorization header `authorize` makes for it. */
export function httpCaller(base: string, authorize: (method: Method, path: string) => string | undefined): HttpCall {
  return async (method, path, body) => {
    const authorization = authorize(method, path);
    // overHttp's type names the methods its callers used so far; undici sends any
    const answer = await overHttp(base, method as "POST", path, {
      headers: {
        ...(authorization && { authorization }),
        ...(body !== undefined && { "content-type": "application/json" }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { ...answer, json: () => JSON.parse(answer.body) as Record<string, unknown> };
  };
}

export const bearerCaller = (base: string, token: string) => httpCaller(base, () => `Bearer ${token}`);

/** Requests signed with an application's token credentials (JSON bodies are not signed, as RFC 5849 says). */
export function grantCaller(base: string, consumer: { key: string; secret: string }, grant: Credentials): HttpCall {
  return httpCaller(base, (method, path) => authHeader(signer(consumer), { method, url: `${base}${path}` }, grant));
}

/** The problem (or SCIM error) of an answer, which must have this status and code. */
export function refusalOf(answer: Answer, status: number, code: string): { detail: string; scimType?: string } {
  expect(answer.statusCode, answer.body).toBe(status);
  const body = answer.json() as { code: string; detail: string; scimType?: string };
  expect(body.code, answer.body).toBe(code);
  return body;
}

export const patchRequest = (...Operations: { op: string; path?: string; value?: unknown }[]) => ({
  schemas: [PATCH_OP],
  Operations,
});

export const bulkRequest = (...Operations: Record<string, unknown>[]) => ({
  schemas: ["urn:ietf:params:scim:api:messages:2.0:BulkRequest"],
  Operations,
});
