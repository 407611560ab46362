/**
 * Holds every answer the server tests see to the OpenAPI document the server publishes: its
 * status must be one the operation documents, its media type one that status documents, its
 * body valid under that media type's schema (JSON and form bodies), its required headers there,
 * and a problem's `code` one of those the response lists (`x-problem-codes`).
 *
 * `checkAnswers(app)` wraps the app's inject() and watches its HTTP server, so every test that
 * builds its app with the server helper is checked, whether it injects or calls over a socket. An
 * answer outside the document fails the test at the inject that received it; one sent over a
 * socket fails `assertSocketAnswersDocumented()`, which the test server's close() calls (the
 * test's teardown), naming each. With
 * OPENAPI_CHECK_LOG=<file> they are appended to that file instead, one JSON line each, so that a
 * whole run can be surveyed.
 */
import { appendFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { allRoutes } from "../../src/contract/index.js";

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

type Json = Record<string, unknown>;

interface Response {
  description?: string;
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, { schema?: Json }>;
  "x-problem-codes"?: string[];
}

interface Operation {
  operationId?: string;
  responses: Record<string, Response>;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: Json;
}

/** What the check needs of an exchange. */
export interface Exchange {
  method: string;
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const DOCUMENT_ID = "openapi.json";

interface Template {
  template: string;
  pattern: RegExp;
  /** static segments count: a path with more of them wins, as in the router */
  specificity: number;
  operations: Map<string, Operation>;
}

/** `/a/{b}/c` (or the contract's `/a/:b/c`) as the router matches it: any case, a trailing slash allowed. */
function templatePattern(template: string): RegExp {
  const source = template
    .split("/")
    .map((segment) => (/^\{.+\}$|^:/.test(segment) ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`, "i");
}

const isJson = (mediaType: string) => /^application\/(?:[\w.+-]+\+)?json$/i.test(mediaType);

/** The document's local references made absolute, so that a schema compiled alone finds its components. */
function anchored(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(anchored);
  if (schema && typeof schema === "object") {
    return Object.fromEntries(
      Object.entries(schema).map(([key, value]) => [
        key,
        key === "$ref" && typeof value === "string" && value.startsWith("#/")
          ? `${DOCUMENT_ID}${value}`
          : anchored(value),
      ]),
    );
  }
  return schema;
}

/** A form body as an object: one value a name, or the list of them when it repeats. */
function formObject(body: string): Json {
  const out: Json = {};
  for (const [name, value] of new URLSearchParams(body)) {
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

export class OpenApiChecker {
  private readonly templates: Template[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<Json, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    addFormats(this.ajv);
    this.ajv.addSchema({ components: anchored(document.components ?? {}) }, DOCUMENT_ID);
    const byTemplate = new Map<string, Template>();
    const add = (template: string, method: string, operation: Operation) => {
      const key = template.toLowerCase().replace(/\{[^}]+\}|:[^/]+/g, "{}");
      let entry = byTemplate.get(key);
      if (!entry) {
        entry = {
          template,
          pattern: templatePattern(template),
          specificity: template.split("/").filter((s) => s && !/^\{|^:/.test(s)).length,
          operations: new Map(),
        };
        byTemplate.set(key, entry);
        this.templates.push(entry);
      }
      entry.operations.set(method.toUpperCase(), operation);
    };
    const byId = new Map<string, Operation>();
    for (const [template, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation || typeof operation !== "object" || !("responses" in operation)) continue;
        add(template, method, operation);
        if (operation.operationId) byId.set(operation.operationId, operation);
      }
    }
    // the contract's aliases are served by the same operation, and hidden from the document
    for (const entry of allRoutes) {
      const operation = byId.get(entry.id);
      if (operation) for (const alias of entry.aliases ?? []) add(alias, entry.method, operation);
    }
    this.templates.sort((a, b) => b.specificity - a.specificity);
  }

  private validator(schema: Json): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      validate = this.ajv.compile(anchored(schema) as Json);
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /** The operation a request reaches, if the document has one; the router's way: a static path first. */
  operationOf(method: string, url: string): { template: string; operation?: Operation } | undefined {
    // the path the server receives: dot segments resolved, as inject and HTTP clients do
    const path = new URL(url.replace(/\/{2,}/g, "/"), "http://localhost").pathname;
    const found = this.templates.find((t) => t.pattern.test(path));
    if (!found) return undefined;
    const verb = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    return { template: found.template, operation: found.operations.get(verb) };
  }

  /**
   * What is wrong with this answer, measured against the document; undefined when it conforms.
   * `withoutBody`: its body was not kept (too long to record), so only the rest is checked.
   */
  check(exchange: Exchange, { withoutBody = false } = {}): string | undefined {
    const { method, url, status } = exchange;
    const contentType = String(exchange.headers["content-type"] ?? "");
    const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
    const show = () => `${method} ${url} → ${status} ${contentType} ${exchange.body.slice(0, 300)}`;
    const reached = this.operationOf(method, url);
    if (!reached?.operation) return this.outsideOperations(exchange, reached !== undefined, show);
    const { operation } = reached;
    const id = operation.operationId ?? reached.template;
    const response =
      operation.responses[String(status)] ??
      operation.responses[`${String(status)[0]}XX`] ??
      operation.responses.default;
    if (!response) return `${id} does not document status ${status}: ${show()}`;
    for (const [name, spec] of Object.entries(response.headers ?? {})) {
      if (spec.required && exchange.headers[name.toLowerCase()] === undefined) {
        return `${id} ${status} lacks its required header ${name}: ${show()}`;
      }
    }
    const head = method.toUpperCase() === "HEAD";
    if (!response.content) {
      if (exchange.body !== "" && !head) return `${id} ${status} documents no body, but one came: ${show()}`;
      return undefined;
    }
    const media = Object.entries(response.content).find(([name]) => name.toLowerCase() === mediaType)?.[1];
    if (!media) {
      const listed = Object.keys(response.content).join(", ");
      return `${id} ${status} documents ${listed}, not ${mediaType || "an answer without a media type"}: ${show()}`;
    }
    if (head || withoutBody || !media.schema) return undefined;
    let value: unknown = exchange.body;
    if (isJson(mediaType)) {
      try {
        value = JSON.parse(exchange.body);
      } catch {
        return `${id} ${status} is not JSON: ${show()}`;
      }
    } else if (mediaType === "application/x-www-form-urlencoded") {
      value = formObject(exchange.body);
    }
    const validate = this.validator(media.schema);
    if (!validate(value)) {
      const why = (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
      return `${id} ${status} ${mediaType} does not match its schema (${why}): ${show()}`;
    }
    const codes = response["x-problem-codes"];
    const code = (value as { code?: unknown } | null)?.code;
    if (codes && isJson(mediaType) && !codes.includes(String(code))) {
      return `${id} ${status} answers code ${String(code)}, which is not among ${codes.join(", ")}: ${show()}`;
    }
    return undefined;
  }

  /**
   * Answers to requests that reach no operation of the document: no route (404), a routed path
   * with another method (405 with Allow), OPTIONS (204 with Allow), and the document itself.
   * Each is a problem document, or has its fixed form.
   */
  private outsideOperations(exchange: Exchange, pathKnown: boolean, show: () => string): string | undefined {
    const method = exchange.method.toUpperCase();
    const path = exchange.url.split("?")[0];
    if (path === "/openapi.json" && (method === "GET" || method === "HEAD") && exchange.status === 200)
      return undefined;
    if (pathKnown && method === "OPTIONS") {
      return exchange.status === 204 && exchange.headers.allow ? undefined : `OPTIONS without 204 and Allow: ${show()}`;
    }
    const expected = pathKnown ? [405, 404] : [404];
    if (!expected.includes(exchange.status)) return `an answer to a request the document does not describe: ${show()}`;
    if (exchange.status === 405 && !exchange.headers.allow) return `405 without Allow: ${show()}`;
    if (method === "HEAD") return undefined;
    const problem = this.document.components?.schemas as Record<string, Json> | undefined;
    if (!String(exchange.headers["content-type"] ?? "").startsWith("application/problem+json") || !problem?.Problem) {
      return `an answer to a request the document does not describe, not a problem document: ${show()}`;
    }
    let body: unknown;
    try {
      body = JSON.parse(exchange.body);
    } catch {
      return `a problem document that is not JSON: ${show()}`;
    }
    const validate = this.validator({ $ref: "#/components/schemas/Problem" });
    return validate(body) ? undefined : `a problem document outside the Problem schema: ${show()}`;
  }
}

const checkers = new Map<string, OpenApiChecker>();

/** One checker per distinct document (the apps of a test file publish the same one). */
export function checkerFor(documentText: string): OpenApiChecker {
  let checker = checkers.get(documentText);
  if (!checker) {
    checker = new OpenApiChecker(JSON.parse(documentText) as OpenApiDocument);
    checkers.set(documentText, checker);
  }
  return checker;
}

function requestLine(options: InjectOptions | string): { method: string; url: string } {
  if (typeof options === "string") return { method: "GET", url: options };
  const url = options.url ?? options.path ?? "/";
  return {
    method: String(options.method ?? "GET"),
    url: typeof url === "string" ? url : String(url.pathname ?? "/"),
  };
}

/** An answer outside the document: thrown at once, or logged when a whole run is surveyed. */
function report(problem: string, where: "inject" | "socket", pending: string[]): void {
  const log = process.env.OPENAPI_CHECK_LOG;
  if (log) {
    appendFileSync(log, `${JSON.stringify({ test: expect.getState().currentTestName, where, problem })}\n`);
    return;
  }
  if (where === "inject") throw new Error(`answer outside the OpenAPI document: ${problem}`);
  pending.push(problem);
}

/** A request target in absolute form (`GET http://host/path`, RFC 9112 section 3.2.2) as its path. */
function originForm(target: string): string {
  if (target.startsWith("/")) return target;
  try {
    const url = new URL(target);
    return url.pathname + url.search;
  } catch {
    return target;
  }
}

/**
 * Records what `response` sends (its status, headers and body, as the client receives them) and
 * hands it to `done` when it has been sent in full.
 */
function recordAnswer(request: IncomingMessage, response: ServerResponse, done: (exchange: Exchange) => void): void {
  const chunks: Buffer[] = [];
  const keep = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function") return;
    chunks.push(
      Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(chunk as string, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8"),
    );
  };
  // Fastify hands its headers to writeHead(), where getHeaders() does not see them
  const written: Record<string, string | string[] | number | undefined> = {};
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
  response.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((arg) => typeof arg === "object" && arg !== null);
    if (headers && !Array.isArray(headers)) {
      for (const [name, value] of Object.entries(headers)) written[name.toLowerCase()] = value as string;
    }
    return writeHead(status, ...rest);
  }) as typeof response.writeHead;
  const write = response.write.bind(response) as (...args: unknown[]) => boolean;
  const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
  response.write = ((chunk: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return write(chunk, ...rest);
  }) as typeof response.write;
  response.end = ((chunk?: unknown, ...rest: unknown[]) => {
    keep(chunk, rest[0]);
    return end(chunk, ...rest);
  }) as typeof response.end;
  response.once("finish", () =>
    done({
      method: request.method ?? "GET",
      url: originForm(request.url ?? "/"),
      status: response.statusCode,
      headers: { ...(response.getHeaders() as Exchange["headers"]), ...written },
      body: Buffer.concat(chunks).toString("utf8"),
    }),
  );
}

/**
 * Checks every answer of `app.inject(options)` (the promise form), and every answer its server
 * sends over a socket, against the app's OpenAPI document.
 */
export function checkAnswers(app: FastifyInstance): { assertSocketAnswersDocumented(): void } {
  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  const original = app.inject;
  let checker: OpenApiChecker | undefined;
  // the document /openapi.json serves, read without a request: nothing is logged or counted
  const documented = () => {
    checker ??= checkerFor(JSON.stringify(app.swagger()));
    return checker;
  };
  const overSockets: string[] = [];
  const checked = async (options: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const response = await inject(options);
    const problem = documented().check({
      ...requestLine(options),
      status: response.statusCode,
      headers: response.headers,
      body: response.body,
    });
    if (problem) report(problem, "inject", overSockets);
    return response;
  };
  app.inject = ((options?: InjectOptions | string, callback?: unknown) =>
    options === undefined || callback !== undefined
      ? (original as (...args: unknown[]) => unknown).call(app, options, callback)
      : checked(options)) as typeof app.inject;

  // before the app's own listener, which may answer before a later one is called
  app.server.prependListener("request", (request: IncomingMessage, response: ServerResponse) =>
    recordAnswer(request, response, (exchange) => {
      const problem = documented().check(exchange);
      if (problem) report(problem, "socket", overSockets);
    }),
  );
  return {
    assertSocketAnswersDocumented() {
      if (overSockets.length === 0) return;
      const listed = overSockets.map((problem) => `- ${problem}`).join("\n");
      overSockets.length = 0;
      throw new Error(`answers over a socket outside the OpenAPI document:\n${listed}`);
    },
  };
}

let builtDocument: Promise<string> | undefined;

/**
 * The OpenAPI document of this build, from an app of its own on an empty data dir: the document
 * does not depend on a server's options (but `servers`, which the check does not read).
 */
function documentOfThisBuild(): Promise<string> {
  builtDocument ??= (async () => {
    const [{ buildApp }, { mkdtemp, rm }, { tmpdir }, { join }] = await Promise.all([
      import("../../src/server/app.js"),
      import("node:fs/promises"),
      import("node:os"),
      import("node:path"),
    ]);
    const dataDir = await mkdtemp(join(tmpdir(), "bizctl-openapi-"));
    try {
      const app = await buildApp({ log: false, dataDir });
      try {
        return JSON.stringify(app.swagger());
      } finally {
        await app.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  })();
  return builtDocument;
}

/**
 * Builds the document of this build now, in the background, so that a check at a server's stop
 * (whose time some tests bound) does not wait for it.
 */
export function prepareRecordedAnswersCheck(): void {
  documentOfThisBuild().catch(() => {
    // the check itself reports a build that fails
  });
}

/**
 * The answers a server process recorded (answer-recorder.mjs) that the document does not
 * describe; a body cut for its size is checked without it.
 */
export async function recordedAnswersOutside(logText: string): Promise<string[]> {
  const lines = logText.split("\n").filter((line) => line !== "");
  if (lines.length === 0) return [];
  const checker = checkerFor(await documentOfThisBuild());
  const problems: string[] = [];
  for (const line of lines) {
    const { cut, ...exchange } = JSON.parse(line) as Exchange & { cut: boolean };
    const problem = checker.check({ ...exchange, url: originForm(exchange.url) }, { withoutBody: cut });
    if (problem) problems.push(problem);
  }
  return problems;
}
