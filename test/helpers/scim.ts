/**
 * A server listening on a real socket, as an identity provider reaches it: SCIM requests in
 * application/scim+json with a Bearer token, on SQLite or on a PostgreSQL database of its own.
 */
import { request } from "undici";
import { afterAll, beforeAll } from "vitest";
import { startPostgresTestServer } from "./postgres.js";
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  type InjectResponse,
  loginToken,
  startTestServer,
  type TestServer,
  type TestServerOptions,
} from "./server.js";

export const SCIM_MEDIA_TYPE = "application/scim+json";
export const SCIM_ERROR = "urn:ietf:params:scim:api:messages:2.0:Error";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const ENTERPRISE_SCHEMA = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
export const LIST_RESPONSE = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/** bizctl's extension of the User: the account state (firstLogin, locked) */
export const ACCOUNT_SCHEMA = "urn:bizctl:schemas:extension:account:2.0:User";

/** One operation of a PATCH (RFC 7644 section 3.5.2). */
export interface PatchOperation {
  op: string;
  path?: string;
  value?: unknown;
}

/** A PATCH request's body of these operations. */
export const patchOf = (...Operations: PatchOperation[]) => ({ schemas: [PATCH_OP], Operations });

/** An attribute as /Schemas describes it (RFC 7643 section 7). */
export interface SchemaAttribute {
  name: string;
  type: string;
  multiValued: boolean;
  required: boolean;
  mutability: string;
  returned: string;
  uniqueness: string;
  caseExact: boolean;
  description: string;
  canonicalValues?: string[];
  subAttributes?: SchemaAttribute[];
}

export interface Wire {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: a test reads any member of an answer
  json(): any;
}

/** An answer of inject() read as a Wire. */
export const wireOf = (response: InjectResponse): Wire => ({
  status: response.statusCode,
  headers: response.headers,
  text: response.body,
  json: () => JSON.parse(response.body),
});

export interface ScimServer {
  server: TestServer;
  base: string;
  token: string;
  /** an HTTP request to the server; a body that is not a string goes as application/scim+json */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Wire>;
  close(): Promise<void>;
}

export const DATABASES = [
  { name: "SQLite", start: (options?: TestServerOptions) => startTestServer(options) },
  { name: "PostgreSQL", start: (options?: TestServerOptions) => startPostgresTestServer(options) },
] as const;

/** The user names of the Users a filter selects, sorted: what a filter test compares. */
export async function userNamesFound(scim: Pick<ScimServer, "call">, filter: string): Promise<string[]> {
  const answer = await scim.call("GET", `/Resources?resourcetypes=User&filter=${encodeURIComponent(filter)}`);
  if (answer.status !== 200) throw new Error(`the filter ${filter} answered ${answer.status}: ${answer.text}`);
  return (answer.json().Resources as { userName: string }[]).map((r) => r.userName).sort();
}

export async function startScimServer(
  start: (options?: TestServerOptions) => Promise<TestServer>,
  options: TestServerOptions = {},
): Promise<ScimServer> {
  const server = await start(options);
  try {
    const base = await server.app.listen({ port: 0, host: "127.0.0.1" });
    const token = await loginToken(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const payload = body === undefined || typeof body === "string" ? body : JSON.stringify(body);
      const response = await request(`${base}${path}`, {
        method: method as "GET",
        headers: {
          authorization: `Bearer ${token}`,
          accept: SCIM_MEDIA_TYPE,
          ...(payload !== undefined && { "content-type": SCIM_MEDIA_TYPE }),
          ...headers,
        },
        body: payload,
      });
      const text = await response.body.text();
      return { status: response.statusCode, headers: response.headers, text, json: () => JSON.parse(text) };
    };
    return { server, base, token, call, close: () => server.close() };
  } catch (error) {
    await server.close();
    throw error;
  }
}

/**
 * The SCIM server of one describe block, started (its admin logged in) before its first test and
 * closed after its last; its members are there inside tests and hooks. Hooks declared after this
 * call see it started.
 */
export function useScimServer(
  start: (options?: TestServerOptions) => Promise<TestServer>,
  options: TestServerOptions = {},
): ScimServer {
  let scim: ScimServer | undefined;
  beforeAll(async () => {
    scim = await startScimServer(start, options);
  });
  afterAll(async () => scim?.close());
  const started = () => {
    if (!scim) throw new Error("the SCIM server starts in beforeAll: use it inside a test or a hook");
    return scim;
  };
  return {
    get server() {
      return started().server;
    },
    get base() {
      return started().base;
    },
    get token() {
      return started().token;
    },
    call: (...request) => started().call(...request),
    close: () => started().close(),
  };
}

/**
 * Asserts a SCIM error (RFC 7644 section 3.12) with this status (and SCIM type), carrying the
 * problem's code and title as well; returns it. Throws with the whole answer otherwise.
 */
export function scimErrorOf(answer: Wire | InjectResponse, status: number, scimType?: string) {
  const wire = "statusCode" in answer ? wireOf(answer) : answer;
  const show = () => `${wire.status} ${String(wire.headers["content-type"])} ${wire.text.slice(0, 500)}`;
  if (wire.status !== status) throw new Error(`expected ${status}, got ${show()}`);
  if (!String(wire.headers["content-type"]).startsWith(SCIM_MEDIA_TYPE)) throw new Error(`not SCIM: ${show()}`);
  const body = wire.json();
  if (JSON.stringify(body.schemas) !== JSON.stringify([SCIM_ERROR])) throw new Error(`no Error schema: ${show()}`);
  if (body.status !== String(status)) throw new Error(`status is not "${status}": ${show()}`);
  if (typeof body.detail !== "string" || typeof body.code !== "string" || typeof body.title !== "string") {
    throw new Error(`detail, code or title missing: ${show()}`);
  }
  if (scimType !== undefined && body.scimType !== scimType) throw new Error(`scimType is not ${scimType}: ${show()}`);
  return body as {
    status: string;
    scimType?: string;
    detail: string;
    code: string;
    title: string;
    errors?: { path: string; message: string }[];
  };
}
