import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LightMyRequestResponse } from "fastify";
import type { Role } from "../../src/contract/route.js";
import { type BuiltApp, buildApp } from "../../src/server/app.js";
import type { ServerOptions } from "../../src/server/options.js";
import { createFirstAdmin } from "../../src/server/services/first-admin.js";
import { hashPassword } from "../../src/server/services/passwords.js";
import { insertResource } from "../../src/server/store/resources-repo.js";
import { saveCredential } from "../../src/server/store/users-repo.js";

/** A password the policy accepts (>= 15 characters, not common, no user name in it). */
export const ADMIN_PASSWORD = "correct horse battery staple 42";
export const ADMIN_USER = "Ada.Admin";

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
    return {
      app: built,
      dataDir,
      admin: { id: created.id, userName, password },
      close: async () => {
        await built.close();
        await rm(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await app?.close();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
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
  const response = await app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });
  if (response.statusCode !== 200) {
    throw new Error(`login of ${userName} answered ${response.statusCode}: ${response.body}`);
  }
  return response.json() as LoginBody;
}

export async function loginToken(app: BuiltApp, userName: string, password: string): Promise<string> {
  return (await login(app, userName, password)).token;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

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
export type Call = (
  method: "GET" | "POST" | "PUT" | "DELETE",
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
