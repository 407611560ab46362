import type { TSchema } from "@sinclair/typebox";
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  onRequestHookHandler,
  preValidationHookHandler,
} from "fastify";
import type { BodyOf, ParamsOf, QueryOf, ResponseOf, RouteEntry } from "../../contract/route.js";
import { integerParameters, readIntegers } from "../http/query-integers.js";
import { declaredNames } from "../http/query-names.js";
import { undecodableQuery } from "../http/well-formed.js";
import { authorize } from "../plugins/authenticate.js";
import { answerNotModified } from "../plugins/conditional-get.js";
import { lowerCaseQueryNames, scimMediaType } from "../plugins/scim-wire.js";
import { ProblemError } from "../problem-error.js";
import type { ServiceContext } from "../services/service-context.js";

export type TypedRequest<E extends RouteEntry> = FastifyRequest<{
  Params: ParamsOf<E>;
  Querystring: QueryOf<E>;
  Body: BodyOf<E>;
}>;

/** What the handler of an operation that carries an ETag answers: the body, and the ETag its registration sends. */
export interface Versioned {
  body: unknown;
  etag: string;
}

/** The contract marks the operation `etag` and its success has a body (a deletion's 204 has none). */
type CarriesEtag<E extends RouteEntry> = E["etag"] extends true
  ? ResponseOf<E> extends undefined
    ? false
    : true
  : false;

const carriesEtag = (entry: RouteEntry) =>
  entry.etag === true && Object.values(entry.responses).some((schema) => schema !== null);

export type RouteHandler<E extends RouteEntry> = (
  request: TypedRequest<E>,
  reply: FastifyReply,
) => Promise<CarriesEtag<E> extends true ? Versioned : unknown>;

type AnyHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** The ETag header, set here for every operation that carries one, so no route sets it by hand. */
function sendingEtag(handler: AnyHandler): AnyHandler {
  return async (request, reply) => {
    const { body, etag } = (await handler(request, reply)) as Versioned;
    reply.header("etag", etag);
    return body;
  };
}

function responseSchemas(entry: RouteEntry): Record<number, TSchema | { type: "null"; description: string }> {
  const out: Record<number, TSchema | { type: "null"; description: string }> = {};
  for (const [status, schema] of Object.entries(entry.responses)) {
    out[Number(status)] = schema ?? { type: "null", description: "No content" };
  }
  return out;
}

/** The parameter names a query schema declares. */
const queryNames = (query: TSchema): string[] => Object.keys((query as { properties?: object }).properties ?? {});

/**
 * What runs before a query is validated: a parameter that does not decode as UTF-8 is refused,
 * rather than read as its raw escapes, and the whole numbers the schema declares are read as
 * numbers (http/query-integers.ts), so that the schema checks their range; where the contract
 * says so, its names are read in any case (http/query-names.ts).
 */
function queryReader(query: TSchema, namesAnyCase: boolean): preValidationHookHandler {
  const integers = integerParameters(query);
  const spelled = namesAnyCase ? declaredNames(queryNames(query)) : undefined;
  return (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void => {
    if (spelled) request.query = spelled(request.query as Record<string, unknown>);
    const issue = undecodableQuery(request.url);
    if (issue) {
      done(
        new ProblemError("validation_failed", `The request is not valid: ${issue.path}: ${issue.message}.`, {
          errors: [issue],
        }),
      );
      return;
    }
    if (integers.length > 0) readIntegers(request.query as Record<string, unknown>, integers);
    done();
  };
}

/**
 * Registers a contract entry: its path and aliases, its schemas, its access rule, one handler;
 * the ETag of an operation that carries one (the handler answers `{ body, etag }`).
 */
export function registerRoute<E extends RouteEntry>(
  app: FastifyInstance,
  ctx: ServiceContext,
  entry: E,
  handler: RouteHandler<E>,
  /** hooks run before the access check, shared by the path and its aliases (a rate limiter) */
  before: onRequestHookHandler[] = [],
): void {
  const schema = {
    operationId: entry.id,
    summary: entry.summary,
    tags: [...entry.tags],
    ...(entry.params && { params: entry.params }),
    ...(entry.query && { querystring: entry.query }),
    ...(entry.body && { body: entry.body }),
    response: responseSchemas(entry),
  };
  // for the OpenAPI document (openapi.ts): what decides the operation's answers besides its schemas
  const openapi = { entry, rateLimited: before.length > 0 };
  // one hook list for the path and its aliases; a public route without a limiter runs no onRequest hook
  const gate = authorize(ctx, entry.access);
  const onRequest = gate ? [...before, gate] : before;
  // only where the contract declares a query: the other routes read none; SCIM's names in any case first
  const readQuery = entry.query && queryReader(entry.query, entry.queryNamesAnyCase === true);
  const preValidation = readQuery && (entry.scim ? [lowerCaseQueryNames, readQuery] : readQuery);
  const versioned = carriesEtag(entry);
  const answer = versioned ? sendingEtag(handler as AnyHandler) : (handler as AnyHandler);
  // a read that carries an ETag answers If-None-Match with 304; the scim media type, on SCIM's wire
  const onSend = [
    ...(versioned && entry.method === "GET" ? [answerNotModified] : []),
    ...(entry.scim === "wire" ? [scimMediaType] : []),
  ];
  for (const url of [entry.path, ...(entry.aliases ?? [])]) {
    app.route({
      method: entry.method,
      url,
      schema: url === entry.path ? schema : { ...schema, hide: true },
      ...(onRequest.length > 0 && { onRequest }),
      config: { openapi, ...(entry.scim && { scim: entry.scim }) },
      ...(preValidation && { preValidation }),
      ...(onSend.length > 0 && { onSend }),
      handler: answer,
    });
  }
}
