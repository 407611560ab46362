import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type { LightMyRequestResponse } from "fastify";
import { request } from "undici";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Role } from "../../src/contract/route.js";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import type { ServerOptions } from "../../src/server/options.js";
import { createFirstAdmin } from "../../src/server/services/first-admin.js";
import { hashPassword } from "../../src/server/services/passwords.js";
import { insertResource } from "../../src/server/store/resources-repo.js";
import { saveCredential } from "../../src/server/store/users-repo.js";
import { checkAnswers } from "./openapi-check.js";

/** A password the policy accepts (>= 15 characters, not common, no user name in it). */
export const ADMIN_PASSWORD = "correct horse battery staple 42";
export const ADMIN_USER = "Ada.Admin";
/** Passwords the policy accepts for the further users of a test: their own, one to change to, a temporary one. */
export const USER_PASSWORD = "velvet harbour quartz 6620 meadow";
export const NEW_PASSWORD = "sienna pebble lantern 3391 orchid";
export const TEMP_PASSWORD = "ochre violin summit 4478 tundra";

export interface TestAdmin {
  id: string;
  userName: string;
  password: string;
}

export interface TestServer {
  app: BuiltApp;
  dataDir: string;
  admin: TestAdmin;
  /** the PostgreSQL database's URL (startPostgresTestServer) */
  databaseUrl?: string;
  /** closes the app and removes the data dir */
  close(): Promise<void>;
}

export interface TestServerOptions extends Partial<Omit<ServerOptions, "dataDir">> {
  userName?: string;
  password?: string;
  /** the first admin's password is temporary (firstLogin true) */
  temporary?: boolean;
}

export async function makeDataDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), "bizctl-test-"));
}

/** A real app on a fresh temporary data dir, with its first admin created. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const { userName = ADMIN_USER, password = ADMIN_PASSWORD, temporary = false, ...serverOptions } = options;
  const dataDir = await makeDataDir();
  let app: BuiltApp | undefined;
  try {
    app = await buildApp({ log: false, ...serverOptions, dataDir });
    const created = await createFirstAdmin(app.services, { userName, password, temporary });
    const built = app;
    // every answer a test receives, through inject() or a socket, must be one /openapi.json describes
    const answers = checkAnswers(built);
    return {
      app: built,
      dataDir,
      admin: { id: created.id, userName, password },
      close: async () => {
        await built.close();
        await rm(dataDir, { recursive: true, force: true });
        answers.assertSocketAnswersDocumented();
      },
    };
  } catch (error) {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** An app listening on a loopback port, in this process. */
export interface ListeningApp {
  url: string;
  /** closes the app; throws when an answer it sent is outside the OpenAPI document */
  close(): Promise<void>;
}

/**
 * A data dir that `server init` prepared, served over real HTTP on an ephemeral loopback port in
 * this process, with what `server start` gives the app when no flag is set (an uninitialised dir
 * is refused; the mail queue and the audit pruning run): for tests whose subject is a client of
 * the server, not the server's process. Every answer it sends is held to /openapi.json, as a
 * spawned server's are. Routes compile their schemas when first used, as the embedded CLI's do:
 * a test serves a few requests per app.
 */
export async function serveDataDir(dataDir: string): Promise<ListeningApp> {
  const app = await buildApp({
    dataDir,
    log: false,
    requireInitialised: true,
    mailSenderLoop: true,
    compileSchemasOnFirstUse: true,
  });
  try {
    const answers = checkAnswers(app);
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    app.useListenUrl(url);
    return {
      url,
      close: async () => {
        await app.close();
        answers.assertSocketAnswersDocumented();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** How a suite starts its server: startTestServer (SQLite) or startPostgresTestServer. */
export type StartServer = (options?: TestServerOptions) => Promise<TestServer>;

export interface FixtureOptions extends TestServerOptions {
  /** false: the fixture does not log the first admin in (its token, auth and call then throw) */
  login?: boolean;
  /** true: the app also listens on an ephemeral loopback port, at `url` */
  listen?: boolean;
}

/**
 * The server of one describe block (or of the file), as a TestServer: its members are there inside
 * tests and hooks, once it has started; `call` and `anonymous` may be taken while the tests are declared.
 */
export interface ServerFixture extends Readonly<TestServer> {
  /** the first admin's Bearer token */
  readonly token: string;
  /** the Authorization header of that token */
  readonly auth: { authorization: string };
  /** requests as the first admin */
  readonly call: Call;
  /** requests without credentials */
  readonly anonymous: Call;
  /** where it listens (the option listen), e.g. http://127.0.0.1:40123 */
  readonly url: string;
  /** requests over that socket */
  readonly wire: WireCall;
  /** a further user with these roles, written into the store and logged in */
  signIn(input: SignInInput): Promise<SignedIn>;
}

export interface SignedIn extends TestAdmin {
  token: string;
  /** requests as this user */
  call: Call;
}

/**
 * Starts a server, and logs its first admin in, before the first test of the describe block around
 * it (or of the file), and closes it after the last. Hooks declared after this call see it started;
 * options given as a function are read (awaited) when it starts, after the hooks declared before it.
 */
export function useTestServer(
  options: FixtureOptions | (() => FixtureOptions | Promise<FixtureOptions>) = {},
  start: StartServer = startTestServer,
): ServerFixture {
  let server: TestServer | undefined;
  let token = "";
  let url = "";
  beforeAll(async () => {
    const {
      login = true,
      listen = false,
      ...serverOptions
    } = typeof options === "function" ? await options() : options;
    server = await start(serverOptions);
    if (listen) url = await server.app.listen({ port: 0, host: "127.0.0.1" });
    if (login) token = await loginToken(server.app, server.admin.userName, server.admin.password);
  });
  afterAll(async () => server?.close());
  const started = () => {
    if (!server) throw new Error("the test server starts in beforeAll: use it inside a test or a hook");
    return server;
  };
  const fixture: ServerFixture = {
    get app() {
      return started().app;
    },
    get dataDir() {
      return started().dataDir;
    },
    get admin() {
      return started().admin;
    },
    get databaseUrl() {
      return started().databaseUrl;
    },
    close: () => started().close(),
    get token() {
      started();
      if (!token) throw new Error("this test server's admin is not logged in (login: false)");
      return token;
    },
    get auth() {
      return bearer(fixture.token);
    },
    call: (...request) => caller(started().app, fixture.token)(...request),
    anonymous: (...request) => caller(started().app)(...request),
    get url() {
      started();
      if (!url) throw new Error("this test server does not listen (listen: true)");
      return url;
    },
    wire: (...request) => overHttp(fixture.url, ...request),
    signIn: (input) => signIn(started().app, input),
  };
  return fixture;
}

/**
 * For tests that each start servers of their own: a start function whose servers are closed after
 * the test that started them.
 */
export function serverPerTest(start: StartServer = startTestServer): StartServer {
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (options) => {
    const started = await start(options);
    servers.push(started);
    return started;
  };
}

/** What insertUser takes, the password USER_PASSWORD unless given. */
export type SignInInput = Omit<Parameters<typeof insertUser>[1], "password"> & { password?: string };

/** A further user written into the store (see insertUser) and logged in. */
export async function signIn(app: BuiltApp, input: SignInInput): Promise<SignedIn> {
  const user = await insertUser(app, { password: USER_PASSWORD, ...input });
  const token = await loginToken(app, user.userName, user.password);
  return { ...user, token, call: caller(app, token) };
}

export interface LoginBody {
  token: string;
  tokenType: string;
  expiresAt: string;
  firstLogin: boolean;
  user: { id: string; userName: string; displayName?: string; roles: string[] };
}

/** POST /auth/login through the full pipeline; fails the test unless it answers 200. */
export async function login(app: BuiltApp, userName: string, password: string): Promise<LoginBody> {
  const response = await tryLogin(app, userName, password);
  if (response.statusCode !== 200) {
    throw new Error(`login of ${userName} answered ${response.statusCode}: ${response.body}`);
  }
  return response.json() as LoginBody;
}

/** POST /auth/login through the full pipeline, whatever it answers. */
export function tryLogin(app: BuiltApp, userName: string, password: string): Promise<InjectResponse> {
  return app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });
}

export async function loginToken(app: BuiltApp, userName: string, password: string): Promise<string> {
  return (await login(app, userName, password)).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A caller with a fresh login of this user (the password USER_PASSWORD unless given). */
export async function loggedIn(app: BuiltApp, userName: string, password = USER_PASSWORD): Promise<Call> {
  return caller(app, await loginToken(app, userName, password));
}

/**
 * A further user written straight into the store (no HTTP round trip, a password that is not
 * temporary unless asked): the same rows as createFirstAdmin writes, filterable values included.
 */
export async function insertUser(
  app: BuiltApp,
  input: { userName: string; password: string; roles: Role[]; temporary?: boolean; email?: string },
): Promise<TestAdmin> {
  const now = app.services.clock();
  const id = crypto.randomUUID();
  const attributes = {
    userName: input.userName,
    displayName: input.userName,
    active: true,
    roles: input.roles.map((value) => ({ value })),
    ...(input.email && { emails: [{ value: input.email, primary: true }] }),
  };
  const passwordHash = await hashPassword(input.password);
  await app.services.store.db.transaction().execute(async (trx) => {
    await insertResource(trx, {
      id,
      resource_type: "User",
      external_id: null,
      display_name: input.userName,
      user_name_key: input.userName.toLowerCase(),
      attributes: JSON.stringify(attributes),
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
      version: 1,
    });
    await saveCredential(trx, id, { passwordHash, firstLogin: input.temporary ?? false }, now);
  });
  return { id, userName: input.userName, password: input.password };
}

export type InjectResponse = LightMyRequestResponse;

/** An answer read off the socket, its body as text. */
export interface WireResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export type WireCall = (
  method: "GET" | "POST" | "PUT" | "DELETE",
  path: string,
  options?: { headers?: Record<string, string>; body?: string | Buffer | Readable },
) => Promise<WireResponse>;

/** One request over real HTTP (undici) to a listening server at `base`. */
export async function overHttp(
  base: string,
  ...[method, path, options = {}]: Parameters<WireCall>
): Promise<WireResponse> {
  const response = await request(`${base}${path}`, { method, headers: options.headers, body: options.body });
  return { statusCode: response.statusCode, headers: response.headers, body: await response.body.text() };
}
export type Call = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  url: string,
  payload?: unknown,
  headers?: Record<string, string>,
) => Promise<InjectResponse>;

/** A caller of the app through the full pipeline, with this Bearer token (none: anonymous). */
export function caller(app: BuiltApp, token?: string): Call {
  return (method, url, payload, headers = {}) =>
    app.inject({
      method,
      url,
      headers: { ...(token ? bearer(token) : {}), ...headers },
      ...(payload !== undefined && { payload: payload as object }),
    });
}

/** POST /Resources as this caller; fails the test unless it answers 201. Returns the representation. */
export async function createResource(call: Call, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await call("POST", "/Resources", body);
  if (response.statusCode !== 201) {
    throw new Error(`POST /Resources answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
  }
  return response.json() as Record<string, unknown>;
}

/** POST an event as this caller; fails the test unless it answers 201. Returns the representation. */
export async function createEvent(call: Call, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await call("POST", "/api/crm/v1/events", body);
  if (response.statusCode !== 201) {
    throw new Error(`POST /api/crm/v1/events answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
  }
  return response.json() as Record<string, unknown>;
}

interface ProblemLike {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  requestId?: string;
  errors?: { path: string; message: string }[];
  /** SCIM's error type, on problems of the resources area */
  scimType?: string;
}

/**
 * Asserts an RFC 9457 problem document with this status and code and returns it.
 * Throws with the whole response when it is not one, so a failure shows what came back.
 */
export function problemOf(response: ProblemLike, status: number, code: string): ProblemBody {
  const contentType = String(response.headers["content-type"] ?? "");
  const describe = () => `${response.statusCode} ${contentType} ${response.body.slice(0, 500)}`;
  if (response.statusCode !== status) throw new Error(`expected status ${status}, got ${describe()}`);
  if (!contentType.startsWith("application/problem+json")) {
    throw new Error(`expected application/problem+json, got ${describe()}`);
  }
  const body = JSON.parse(response.body) as ProblemBody;
  if (body.code !== code) throw new Error(`expected code ${code}, got ${describe()}`);
  if (body.status !== status) throw new Error(`problem status ${body.status} differs from HTTP ${status}`);
  if (typeof body.type !== "string" || typeof body.title !== "string" || typeof body.detail !== "string") {
    throw new Error(`incomplete problem document: ${describe()}`);
  }
  if (/\n\s+at /.test(response.body)) throw new Error(`stack trace in the response: ${describe()}`);
  return body;
}

/** A controllable clock for buildApp's `clock` option. */
export function manualClock(start = new Date()) {
  let now = start.getTime();
  return {
    clock: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}
