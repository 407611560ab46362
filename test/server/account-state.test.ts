import { beforeAll, describe, expect, it } from "vitest";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  createResource,
  insertUser,
  loggedIn,
  problemOf,
  TEMP_PASSWORD,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/** A User's read-only account state: shown to admin and support, filterable, never stored from input. */

const WRONG = "definitely not the password 0";
type Json = Record<string, unknown>;

describe.each(STORES)("account state on %s", (_store, start) => {
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  const admin = server.call;
  let support: Call;
  const login = (userName: string, password: string) =>
    server.app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });
  const ids = (response: { json(): unknown }) =>
    ((response.json() as { Resources: Json[] }).Resources ?? []).map((r) => r.userName);
  const list = (filter: string) => admin("GET", `/Resources?resourcetypes=User&filter=${encodeURIComponent(filter)}`);

  beforeAll(async () => {
    support = (await server.signIn({ userName: "helpdesk", roles: ["support"] })).call;
    await insertUser(server.app, { userName: "locked.one", password: USER_PASSWORD, roles: ["member"] });
    await insertUser(server.app, { userName: "busy.one", password: USER_PASSWORD, roles: ["member"] });
    for (let i = 0; i < 5; i++) expect((await login("locked.one", WRONG)).statusCode).toBe(401);
    for (let i = 0; i < 2; i++) expect((await login("busy.one", USER_PASSWORD)).statusCode).toBe(200);
  });

  it("shows admin and support how an account stands", async () => {
    for (const reader of [admin, support]) {
      const [locked] = (await list('userName eq "locked.one"')).json().Resources as Json[];
      expect(locked).toMatchObject({ locked: true, failedLogins: 5, openSessions: 0, firstLogin: false });
      expect(Date.parse(String(locked!.lockedUntil))).toBeGreaterThan(Date.now());
      expect(locked).not.toHaveProperty("lastLogin");
      const busy = (
        await reader("GET", `/Resources/${(await list('userName eq "busy.one"')).json().Resources[0].id}`)
      ).json();
      expect(busy).toMatchObject({ locked: false, failedLogins: 0, openSessions: 2 });
      expect(Date.parse(String(busy.lastLogin))).not.toBeNaN();
      expect(Date.parse(String(busy.passwordChangedAt))).not.toBeNaN();
    }
  });

  const FILTERS: { filter: string; expected: string[] }[] = [
    { filter: "locked eq true", expected: ["locked.one"] },
    { filter: "failedLogins ge 5", expected: ["locked.one"] },
    { filter: "openSessions gt 1", expected: ["busy.one"] },
    { filter: 'lastLogin pr and userName sw "b"', expected: ["busy.one"] },
    { filter: 'locked eq false and userName ew ".one"', expected: ["busy.one"] },
    { filter: "firstLogin eq true", expected: [] },
  ];
  for (const { filter, expected } of FILTERS)
    it(`filters on it: ${filter}`, async () => {
      const response = await list(filter);
      expect(response.statusCode, response.body).toBe(200);
      expect(ids(response).sort()).toEqual(expected);
    });

  it("a member sees its own User without the state, firstLogin and passwordState included", async () => {
    const member = await loggedIn(server.app, "busy.one");
    const [self] = (await member("GET", "/Resources?resourcetypes=User")).json().Resources as Json[];
    const byId = (await member("GET", `/Resources/${String(self!.id)}`)).json() as Json;
    const scim = (await member("GET", "/Me")).json() as Json;
    for (const seen of [self, byId]) {
      expect(seen).toMatchObject({ userName: "busy.one" });
      for (const key of ["firstLogin", "passwordState", "locked", "failedLogins", "openSessions", "lastLogin"]) {
        expect(seen).not.toHaveProperty(key);
      }
    }
    expect(JSON.stringify(scim)).not.toMatch(/firstLogin|passwordState/);
  });

  it("tells no password from a temporary one and from the user's own", async () => {
    const none = await createResource(admin, { resourceType: "User", userName: "state.none" });
    const temporary = await createResource(admin, {
      resourceType: "User",
      userName: "state.temporary",
      password: TEMP_PASSWORD,
    });
    expect(none).toMatchObject({ passwordState: "none", firstLogin: true });
    expect(temporary).toMatchObject({ passwordState: "temporary", firstLogin: true });
    for (const reader of [admin, support]) {
      const read = async (id: unknown) => (await reader("GET", `/Resources/${String(id)}`)).json() as Json;
      expect((await read(none.id)).passwordState).toBe("none");
      expect((await read(temporary.id)).passwordState).toBe("temporary");
      const [own] = (await list('userName eq "busy.one"')).json().Resources as Json[];
      expect(own!.passwordState).toBe("set");
    }
    const scim = (await admin("GET", `/Users/${String(none.id)}`)).json() as Json;
    expect(scim["urn:bizctl:schemas:extension:account:2.0:User"]).toMatchObject({ passwordState: "none" });
    const later = await createResource(admin, { resourceType: "User", userName: "given.later" });
    const replaced = await admin("PUT", `/Resources/${String(later.id)}`, { ...later, password: TEMP_PASSWORD });
    expect(replaced.json()).toMatchObject({ passwordState: "temporary" });
  });

  const STATES: { filter: string; expected: string[] }[] = [
    { filter: 'passwordState eq "none" and userName sw "state."', expected: ["state.none"] },
    { filter: 'passwordState eq "temporary" and userName sw "state."', expected: ["state.temporary"] },
    { filter: 'passwordState eq "set" and userName ew ".one"', expected: ["busy.one", "locked.one"] },
  ];
  for (const { filter, expected } of STATES)
    it(`filters on the password state: ${filter}`, async () => {
      const response = await list(filter);
      expect(response.statusCode, response.body).toBe(200);
      expect(ids(response).sort()).toEqual(expected);
    });

  it("is read-only: ignored in a GET-modify-PUT, refused on create", async () => {
    const [user] = (await list('userName eq "locked.one"')).json().Resources as Json[];
    const replaced = await admin("PUT", `/Resources/${user!.id}`, {
      ...user,
      locked: false,
      failedLogins: 0,
      title: "Clerk",
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ title: "Clerk", locked: true, failedLogins: 5 });
    const stored = await server.app.services.store.db
      .selectFrom("resources")
      .select("attributes")
      .where("id", "=", String(user!.id))
      .executeTakeFirstOrThrow();
    expect(JSON.parse(stored.attributes)).not.toHaveProperty("locked");
    const created = await admin("POST", "/Resources", { resourceType: "User", userName: "new.one", locked: true });
    expect(problemOf(created, 400, "validation_failed").scimType).toBe("mutability");
  });

  it("a temporary password shows as a pending first login and a password change", async () => {
    const user = await createResource(admin, { resourceType: "User", userName: "fresh.one" });
    expect(user).not.toHaveProperty("passwordChangedAt");
    const set = await admin("PUT", `/Resources/${user.id}`, { ...user, password: TEMP_PASSWORD });
    expect(set.json()).toMatchObject({ firstLogin: true });
    expect(Date.parse(String(set.json().passwordChangedAt))).not.toBeNaN();
    expect(ids(await list('firstLogin eq true and userName eq "fresh.one"'))).toEqual(["fresh.one"]);
  });
});
