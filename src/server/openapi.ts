/**
 * The OpenAPI document (`/openapi.json`): @fastify/swagger turns each route's schemas into an
 * operation, and this module completes it from the contract entry the route was registered
 * with (routes/register.ts puts it in the route's config): every error response, per status, from
 * the problem codes the operation can answer (contract/operation-errors.ts, through the same
 * code → status table the server answers with), the media types other than JSON, the headers of
 * redirects, creations and ETags, and the security schemes the operation accepts.
 */
import swagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import { type ErrorCode, PROBLEM_CONTENT_TYPE } from "../contract/errors.js";
import { errorsByStatus, honoursIfMatch, type OperationFacts, operationErrors } from "../contract/operation-errors.js";
import type { RouteEntry } from "../contract/route.js";
import { SCIM_MEDIA_TYPE } from "../contract/scim.js";

/** What registerRoute leaves in a route's config for the document. */
export interface DocumentedOperation extends OperationFacts {
  entry: RouteEntry;
}

declare module "fastify" {
  interface FastifyContextConfig {
    openapi?: DocumentedOperation;
  }
}

type Json = Record<string, unknown>;

/**
 * The body of an operation's error answers: a problem document (RFC 9457). The one place that
 * picks it, so that an operation whose errors take another form (SCIM's error body,
 * `application/scim+json`) names its own here.
 */
export function errorBodyOf(entry: RouteEntry): { mediaType: string; schema: Json } {
  if (entry.scim === "wire") return { mediaType: SCIM_MEDIA_TYPE, schema: { $ref: "#/components/schemas/ScimError" } };
  return { mediaType: PROBLEM_CONTENT_TYPE, schema: { $ref: "#/components/schemas/Problem" } };
}

/** The media type of an operation's JSON answers; an operation that answers `application/scim+json` names it here. */
export function successMediaTypeOf(entry: RouteEntry): string {
  return entry.scim === "wire" ? SCIM_MEDIA_TYPE : "application/json";
}

const REASONS: Record<number, string> = {
  302: "Found",
  303: "See Other",
  304: "Not Modified: If-None-Match names the current ETag",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  409: "Conflict",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

const header = (description: string, required = false): Json => ({
  description,
  ...(required && { required }),
  schema: { type: "string" },
});

const ETAG = header("the entity tag of the representation (its version)", true);

/** The headers an error answer may carry, by status. */
const ERROR_HEADERS: Record<number, Json> = {
  401: {
    "WWW-Authenticate": header(
      'the challenge: Bearer (RFC 6750, with error="invalid_token" for a refused token) or OAuth',
    ),
  },
  429: { "Retry-After": header("seconds before a retry can succeed") },
  503: { "Retry-After": header("seconds before a retry can succeed") },
};

/** JSON Schema as TypeBox built it, without the symbols TypeBox keeps beside it. */
const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema)) as Json;

/** Which security schemes an operation accepts: none for a public one, OAuth token credentials unless it manages an account. */
function securityOf(entry: RouteEntry): Json[] {
  if (entry.access.public) return [];
  return entry.access.managesAccount ? [{ bearer: [] }] : [{ bearer: [] }, { oauth1: [] }];
}

function successResponses(entry: RouteEntry, generated: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [code, schema] of Object.entries(entry.responses)) {
    const status = Number(code);
    const response: Json = { ...(generated[code] ?? {}) };
    const json = (response.content as Json | undefined)?.["application/json"];
    if (schema === null || !json) delete response.content;
    else response.content = { [successMediaTypeOf(entry)]: json };
    const extra = entry.content?.[status];
    if (extra) {
      const content = { ...((response.content as Json | undefined) ?? {}) };
      for (const [mediaType, body] of Object.entries(extra)) content[mediaType] = { schema: plain(body) };
      response.content = content;
      if (schema === null) response.description = `Success: ${Object.keys(extra).join(" or ")}`;
    }
    const headers: Json = {};
    if (status >= 300 && status < 400) {
      headers.Location = header("where the client is sent", true);
      response.description = `${REASONS[status] ?? "Redirect"}: to Location`;
    }
    if (status === 201) headers.Location = header("the URL of what was created", true);
    if (entry.etag && status < 300 && schema !== null) headers.ETag = ETAG;
    if (Object.keys(headers).length > 0) response.headers = { ...((response.headers as Json) ?? {}), ...headers };
    if (!response.description || response.description === "Default Response") response.description = "Success";
    out[code] = response;
  }
  if (entry.etag && entry.method === "GET") {
    out["304"] = { description: REASONS[304], headers: { ETag: ETAG } };
  }
  return out;
}

function errorResponses(entry: RouteEntry, codes: readonly ErrorCode[]): Record<string, Json> {
  const body = errorBodyOf(entry);
  const byStatus = errorsByStatus(codes);
  const pages = Object.keys(entry.content ?? {})
    .map(Number)
    .filter((status) => status >= 400);
  const out: Record<string, Json> = {};
  for (const status of new Set([...byStatus.keys(), ...pages])) {
    const listed = byStatus.get(status) ?? [];
    const content: Json = listed.length > 0 ? { [body.mediaType]: { schema: body.schema } } : {};
    for (const [mediaType, schema] of Object.entries(entry.content?.[status] ?? {})) {
      content[mediaType] = { schema: plain(schema) };
    }
    const reason = REASONS[status] ?? "Error";
    out[String(status)] = {
      description: listed.length > 0 ? `${reason}: ${listed.map((code) => `\`${code}\``).join(", ")}` : reason,
      ...(ERROR_HEADERS[status] && { headers: ERROR_HEADERS[status] }),
      content,
      ...(listed.length > 0 && { "x-problem-codes": listed }),
    };
  }
  return out;
}

const CONDITIONAL_PARAMETERS = {
  read: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "answer 304 without a body when it names the current ETag",
    schema: { type: "string" },
  },
  write: {
    name: "If-Match",
    in: "header",
    required: false,
    description: "write only when it names the current ETag (or is `*`); 412 otherwise",
    schema: { type: "string" },
  },
  writeUnlessMatched: {
    name: "If-None-Match",
    in: "header",
    required: false,
    description: "write only when it names neither `*` nor the current ETag; 412 otherwise",
    schema: { type: "string" },
  },
};

/** The operation @fastify/swagger generated, completed from its contract entry. */
function completeOperation(operation: Json, documented: DocumentedOperation): Json {
  const { entry } = documented;
  const codes = operationErrors(entry, documented);
  const responses = {
    ...successResponses(entry, (operation.responses as Record<string, Json>) ?? {}),
    ...errorResponses(entry, codes),
  };
  const parameters = [...((operation.parameters as Json[]) ?? [])];
  if (entry.etag && entry.method === "GET") parameters.push(CONDITIONAL_PARAMETERS.read);
  if (honoursIfMatch(entry)) parameters.push(CONDITIONAL_PARAMETERS.write, CONDITIONAL_PARAMETERS.writeUnlessMatched);
  const requestBody = entry.requestContent && {
    required: false,
    content: Object.fromEntries(
      Object.entries(entry.requestContent).map(([mediaType, schema]) => [mediaType, { schema: plain(schema) }]),
    ),
  };
  return {
    ...operation,
    ...(parameters.length > 0 && { parameters }),
    ...(requestBody && !operation.requestBody && { requestBody }),
    security: securityOf(entry),
    ...(!entry.access.public &&
      !entry.access.managesAccount &&
      entry.access.scope && { "x-api-token-scope": entry.access.scope }),
    responses: Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b))),
  };
}

const METHODS = ["get", "put", "post", "delete", "patch", "options", "head", "trace"];

/**
 * Registers @fastify/swagger with the document's fixed parts, and completes each operation from
 * the contract entries the routes were registered with. Call before the routes are added.
 */
export async function installOpenApi(app: FastifyInstance, options: { publicUrl?: string }): Promise<void> {
  const operations = new Map<string, DocumentedOperation>();
  app.addHook("onRoute", (route) => {
    const documented = route.config?.openapi;
    if (documented) operations.set(documented.entry.id, documented);
  });
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "bizctl Enterprise Business REST API",
        version: "1",
        description:
          "Every error is an RFC 9457 problem document (`application/problem+json`) whose `code` a client " +
          "branches on; each response lists the codes it can carry (`x-problem-codes`). A path of another " +
          "method answers 405 with `Allow`, and OPTIONS 204 with `Allow`, on every path below.",
        license: { name: "MIT", identifier: "MIT" },
      },
      // relative: the server is where the document was fetched from, unless a public URL is set
      servers: [{ url: options.publicUrl ?? "/" }],
      components: {
        securitySchemes: {
          bearer: {
            type: "http",
            scheme: "bearer",
            bearerFormat: "JWT",
            description:
              "An access token from POST /auth/login (RFC 9068 claims, verifiable with the JWKS), or an API " +
              "token for scripts from POST /auth/tokens (`bzt_` and 32 base62 characters). An API token acts " +
              "as its owner with the owner's current roles, narrowed to its scopes: an operation it may call " +
              "names the scope it needs in `x-api-token-scope` (`any`: every API token); operations without " +
              "one, and those that manage an account, refuse API tokens (403 forbidden).",
          },
          oauth1: {
            type: "http",
            scheme: "OAuth",
            description:
              "OAuth 1.0a (RFC 5849) token credentials: a request signed with HMAC-SHA1, HMAC-SHA256, RSA-SHA1 " +
              "or PLAINTEXT (over HTTPS), its protocol parameters in the `Authorization: OAuth` header or the " +
              "query. It acts as the user who approved the grant; operations that manage an account refuse it.",
          },
        },
      },
    },
    // the paths are the server's own: a public URL's path is a prefix before them, not part of them
    stripBasePath: false,
    // components named by their $id (Problem), not def-0
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`),
    },
    transformObject: (document) => {
      if (!("openapiObject" in document)) return document.swaggerObject;
      const { openapiObject } = document;
      for (const pathItem of Object.values(openapiObject.paths ?? {}) as Json[]) {
        for (const method of METHODS) {
          const operation = pathItem[method] as Json | undefined;
          const documented = operation && operations.get(String(operation.operationId));
          if (operation && documented) pathItem[method] = completeOperation(operation, documented);
        }
      }
      return openapiObject;
    },
  });
}
