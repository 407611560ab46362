import { describe, expect, it } from "vitest";
import {
  ADMIN_USER,
  caller,
  createResource,
  type InjectResponse,
  insertUser,
  login,
  problemOf,
  tryLogin,
  useTestServer,
} from "../helpers/server.js";

const USER_URN = "urn:ietf:params:scim:schemas:core:2.0:User";
const ENTERPRISE_URN = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
/** accepted by the password policy; contains none of the user names below */
const TEMP_PASSWORD = "violet staple engine 7734 quarry";
const OTHER_PASSWORD = "amber lantern orchard 5512 gravel";
const NEW_PASSWORD = "copper meadow whistle 8841 canyon";
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Json = Record<string, unknown>;

/** The headers and meta of a freshly written resource. */
function expectWritten(response: InjectResponse, status: number, type: string, version: number): Json {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers["content-type"]).toMatch(/^application\/json/);
  const body = response.json() as Json;
  const id = body.id as string;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(body.resourceType).toBe(type);
  expect(response.headers.etag).toBe(`"${version}"`);
  const meta = body.meta as Json;
  expect(meta).toEqual({
    resourceType: type,
    created: expect.stringMatching(ISO),
    lastModified: expect.stringMatching(ISO),
    version: `"${version}"`,
    location: `/Resources/${id}`,
  });
  expect(Date.parse(meta.lastModified as string)).toBeGreaterThanOrEqual(Date.parse(meta.created as string));
  return body;
}

describe("resources: create, read, replace, delete", () => {
  const server = useTestServer();
  const admin = server.call;

  it("runs the whole life of a User: 201 + Location + ETag, GET, PUT with If-Match, DELETE with If-Match", async () => {
    const created = await admin("POST", "/Resources", {
      schemas: [USER_URN],
      userName: "bjensen",
      name: { familyName: "Jensen", givenName: "Barbara" },
      title: "Tour Guide",
      emails: [{ value: "bjensen@example.com", type: "work", primary: true }],
    });
    const body = expectWritten(created, 201, "User", 1);
    const id = body.id as string;
    expect(created.headers.location).toBe(`/Resources/${id}`);
    expect(body).toMatchObject({
      schemas: [USER_URN, ENTERPRISE_URN],
      userName: "bjensen",
      name: { familyName: "Jensen", givenName: "Barbara" },
      title: "Tour Guide",
      // defaults of a new user
      active: true,
      roles: [{ value: "member", primary: true }],
      firstLogin: true,
    });

    const read = await admin("GET", `/Resources/${id}`);
    expect(read.statusCode).toBe(200);
    expect(read.headers.etag).toBe('"1"');
    expect(read.json()).toEqual(body);

    // full replacement: what the PUT omits is gone
    const replaced = await admin(
      "PUT",
      `/Resources/${id}`,
      { schemas: [USER_URN], userName: "bjensen", displayName: "Babs", active: true, roles: [{ value: "member" }] },
      { "if-match": '"1"' },
    );
    const next = expectWritten(replaced, 200, "User", 2);
    expect(next.id).toBe(id);
    expect(next.displayName).toBe("Babs");
    expect(next).not.toHaveProperty("title");
    expect(next).not.toHaveProperty("name");
    expect(next).not.toHaveProperty("emails");
    expect((next.meta as Json).created).toBe((body.meta as Json).created);

    // a stale If-Match changes nothing
    const stale = await admin(
      "PUT",
      `/Resources/${id}`,
      { schemas: [USER_URN], userName: "bjensen", title: "Lost update" },
      { "if-match": '"1"' },
    );
    expect(problemOf(stale, 412, "precondition_failed").detail).toMatch(/"2"/);
    const after = await admin("GET", `/Resources/${id}`);
    expect(after.headers.etag).toBe('"2"');
    expect(after.json()).toEqual(next);

    // If-Match on DELETE: a mismatch is refused, the current tag deletes
    problemOf(await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"1"' }), 412, "precondition_failed");
    expect((await admin("GET", `/Resources/${id}`)).statusCode).toBe(200);
    const deleted = await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"2"' });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe("");
    problemOf(await admin("GET", `/Resources/${id}`), 404, "not_found");
    problemOf(await admin("PUT", `/Resources/${id}`, { schemas: [USER_URN], userName: "bjensen" }), 404, "not_found");
    problemOf(await admin("DELETE", `/Resources/${id}`), 404, "not_found");
  });

  it("accepts If-Match: * and a list of tags, and a GET-modify-PUT round trip of the representation", async () => {
    const room = await createResource(admin, { resourceType: "Room", floor: 1 });
    const url = `/Resources/${room.id}`;
    expect((await admin("PUT", url, { ...room, floor: 2 }, { "if-match": "*" })).statusCode).toBe(200);
    expect((await admin("PUT", url, { resourceType: "Room", floor: 3 }, { "if-match": '"7", "2"' })).statusCode).toBe(
      200,
    );
    const user = await createResource(admin, { resourceType: "User", userName: "round.trip" });
    const roundTrip = await admin("PUT", `/Resources/${user.id}`, { ...user, title: "Clerk" }, { "if-match": '"1"' });
    expect(roundTrip.statusCode, roundTrip.body).toBe(200);
    expect(roundTrip.json().title).toBe("Clerk");
  });

  it("runs the whole life of an OAuthConsumer: the secret shows once, the key is generated and kept", async () => {
    const created = await admin("POST", "/Resources", {
      resourceType: "OAuthConsumer",
      name: "Printer",
      callbackUrls: ["https://printer.example.com/cb"],
    });
    const body = expectWritten(created, 201, "OAuthConsumer", 1);
    const id = body.id as string;
    expect(created.headers.location).toBe(`/Resources/${id}`);
    expect(body).toMatchObject({ schemas: ["urn:bizctl:schemas:OAuthConsumer"], name: "Printer" });
    const key = body.consumerKey as string;
    const secret = body.consumerSecret as string;
    expect(key).toMatch(/^[\w-]{16,}$/);
    expect(secret).toMatch(/^[\w-]{32,}$/);

    const read = await admin("GET", `/Resources/${id}`);
    expect(read.statusCode).toBe(200);
    expect(read.headers.etag).toBe('"1"');
    expect(read.json()).not.toHaveProperty("consumerSecret");
    expect(read.body).not.toContain(secret);
    const list = await admin("GET", "/Resources?resourcetypes=OAuthConsumer");
    expect(list.json().totalResults).toBe(1);
    expect(list.body).not.toContain(secret);
    expect(list.body).not.toContain("consumerSecret");

    // full replacement; the key stays when omitted, and cannot be changed
    const replaced = await admin(
      "PUT",
      `/Resources/${id}`,
      { resourceType: "OAuthConsumer", name: "Printer 2" },
      { "if-match": '"1"' },
    );
    const next = expectWritten(replaced, 200, "OAuthConsumer", 2);
    expect(next.name).toBe("Printer 2");
    expect(next.consumerKey).toBe(key);
    expect(next).not.toHaveProperty("callbackUrls");
    expect(replaced.body).not.toContain(secret);
    const rekey = await admin("PUT", `/Resources/${id}`, {
      resourceType: "OAuthConsumer",
      name: "P",
      consumerKey: "x",
    });
    expect(problemOf(rekey, 400, "validation_failed").scimType).toBe("mutability");
    problemOf(
      await admin("PUT", `/Resources/${id}`, { resourceType: "OAuthConsumer", name: "P" }, { "if-match": '"1"' }),
      412,
      "precondition_failed",
    );
    expect((await admin("GET", `/Resources/${id}`)).json()).toEqual(next);

    problemOf(await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"1"' }), 412, "precondition_failed");
    expect((await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"2"' })).statusCode).toBe(204);
    problemOf(await admin("GET", `/Resources/${id}`), 404, "not_found");
  });

  it("refuses a consumerKey chosen by the client on create, and an OAuthConsumer without a name", async () => {
    const chosen = await admin("POST", "/Resources", { resourceType: "OAuthConsumer", name: "X", consumerKey: "mine" });
    expect(problemOf(chosen, 400, "validation_failed").scimType).toBe("mutability");
    const nameless = await admin("POST", "/Resources", { resourceType: "OAuthConsumer" });
    expect(problemOf(nameless, 400, "validation_failed").scimType).toBe("invalidValue");
  });

  it("runs the whole life of a custom type (Room with floor and capacity)", async () => {
    const created = await admin("POST", "/Resources", {
      resourceType: "Room",
      displayName: "Board room",
      floor: 3,
      capacity: 12,
      equipment: ["projector", "phone"],
    });
    const body = expectWritten(created, 201, "Room", 1);
    const id = body.id as string;
    expect(created.headers.location).toBe(`/Resources/${id}`);
    expect(body).toMatchObject({
      schemas: ["urn:bizctl:schemas:Room"],
      displayName: "Board room",
      floor: 3,
      capacity: 12,
      equipment: ["projector", "phone"],
    });
    const read = await admin("GET", `/Resources/${id}`);
    expect(read.headers.etag).toBe('"1"');
    expect(read.json()).toEqual(body);
    problemOf(await admin("GET", `/Resources/${id}?resourcetypes=User`), 404, "not_found");
    expect((await admin("GET", `/Resources/${id}?resourcetypes=User,Room`)).statusCode).toBe(200);

    const replaced = await admin("PUT", `/Resources/${id}`, { resourceType: "Room", floor: 4 }, { "if-match": '"1"' });
    const next = expectWritten(replaced, 200, "Room", 2);
    expect(next).toMatchObject({ floor: 4 });
    expect(next).not.toHaveProperty("capacity");
    expect(next).not.toHaveProperty("displayName");
    problemOf(
      await admin("PUT", `/Resources/${id}`, { resourceType: "Room", floor: 9 }, { "if-match": '"1"' }),
      412,
      "precondition_failed",
    );
    expect((await admin("GET", `/Resources/${id}`)).json()).toEqual(next);
    const retype = await admin("PUT", `/Resources/${id}`, { resourceType: "Desk", floor: 4 });
    expect(problemOf(retype, 400, "validation_failed").scimType).toBe("mutability");
    const reid = await admin("PUT", `/Resources/${id}`, { resourceType: "Room", id: crypto.randomUUID() });
    expect(problemOf(reid, 400, "validation_failed").scimType).toBe("mutability");

    problemOf(await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"1"' }), 412, "precondition_failed");
    expect((await admin("DELETE", `/Resources/${id}`, undefined, { "if-match": '"2"' })).statusCode).toBe(204);
    problemOf(await admin("GET", `/Resources/${id}`), 404, "not_found");
  });

  it("answers 409 with scimType uniqueness for a userName differing only in case, on POST and on PUT", async () => {
    await createResource(admin, { resourceType: "User", userName: "Mixed.Case" });
    const clash = await admin("POST", "/Resources", { resourceType: "User", userName: "mIXED.cASE" });
    expect(problemOf(clash, 409, "conflict").scimType).toBe("uniqueness");
    const other = await createResource(admin, { resourceType: "User", userName: "someone.else" });
    const rename = await admin("PUT", `/Resources/${other.id}`, { resourceType: "User", userName: "MIXED.CASE" });
    expect(problemOf(rename, 409, "conflict").scimType).toBe("uniqueness");
    expect((await admin("GET", `/Resources/${other.id}`)).json().userName).toBe("someone.else");
    const list = await admin("GET", `/Resources?filter=${encodeURIComponent('userName eq "mixed.case"')}`);
    expect(list.json().totalResults).toBe(1);
  });

  it.each([
    ["ESC", "esc\u001b[2J"],
    ["BEL", "bel\u0007"],
    ["NUL", "nul\u0000"],
    ["a newline", "two\nlines"],
    ["DEL", "del\u007f"],
    ["C1 CSI", "csi\u009b31m"],
    ["a right-to-left override", "rlo\u202egnp.exe"],
  ])(
    "refuses a userName holding %s (an identifier), on POST and on PUT, without echoing it",
    async (what, userName) => {
      const created = await admin("POST", "/Resources", { resourceType: "User", userName });
      const problem = problemOf(created, 400, "validation_failed");
      expect(problem.scimType).toBe("invalidValue");
      expect(problem.errors).toEqual([{ path: "/userName", message: expect.stringContaining("control characters") }]);
      expect(created.body).not.toContain(JSON.stringify(userName).slice(1, -1));
      const user = await createResource(admin, {
        resourceType: "User",
        userName: `renamed.${what.replace(/\W+/g, "-")}`,
      });
      const renamed = await admin("PUT", `/Resources/${user.id}`, { ...user, userName });
      expect(problemOf(renamed, 400, "validation_failed").scimType).toBe("invalidValue");
    },
  );

  it("keeps control characters in free text (displayName, a custom type's attributes) exactly as sent", async () => {
    const hostile = "Evil \u001b[2J\u0007\u001b]0;pwned\u0007\u009b31m\u009d0;x\u009c\u202e";
    const user = await createResource(admin, { resourceType: "User", userName: "free.text", displayName: hostile });
    expect((await admin("GET", `/Resources/${user.id}`)).json().displayName).toBe(hostile);
    const room = await createResource(admin, {
      resourceType: "Room",
      displayName: hostile,
      notes: { [hostile]: hostile },
    });
    expect((await admin("GET", `/Resources/${room.id}`)).json()).toMatchObject({
      displayName: hostile,
      notes: { [hostile]: hostile },
    });
  });

  it.each(["id", "meta", "firstLogin"])(
    "refuses a User body carrying %s on POST: 400 scimType mutability",
    async (field) => {
      const value = field === "id" ? crypto.randomUUID() : field === "meta" ? { version: '"1"' } : false;
      const response = await admin("POST", "/Resources", {
        resourceType: "User",
        userName: `carries.${field}`,
        [field]: value,
      });
      const problem = problemOf(response, 400, "validation_failed");
      expect(problem.scimType).toBe("mutability");
      expect(problem.errors).toContainEqual(expect.objectContaining({ path: `/${field}` }));
      const list = await admin("GET", `/Resources?filter=${encodeURIComponent(`userName eq "carries.${field}"`)}`);
      expect(list.json().totalResults).toBe(0);
    },
  );

  it("refuses a change of firstLogin on PUT (read-only), and accepts it unchanged", async () => {
    const user = await createResource(admin, { resourceType: "User", userName: "first.login.ro" });
    const flip = await admin("PUT", `/Resources/${user.id}`, { ...user, firstLogin: false });
    expect(problemOf(flip, 400, "validation_failed").scimType).toBe("mutability");
    expect((await admin("PUT", `/Resources/${user.id}`, { ...user, firstLogin: true })).statusCode).toBe(200);
  });

  it("refuses an unknown attribute on a User or an OAuthConsumer: 400 naming it", async () => {
    const user = await admin("POST", "/Resources", { resourceType: "User", userName: "unknown.attr", shoeSize: 44 });
    const problem = problemOf(user, 400, "validation_failed");
    expect(problem.scimType).toBe("invalidValue");
    expect(problem.detail).toContain("shoeSize");
    const nested = await admin("POST", "/Resources", {
      resourceType: "User",
      userName: "unknown.nested",
      name: { familyName: "X", nickname: "y" },
    });
    problemOf(nested, 400, "validation_failed");
    const wrongType = await admin("POST", "/Resources", {
      resourceType: "User",
      userName: "bad.active",
      active: "yes",
    });
    problemOf(wrongType, 400, "validation_failed");
    const badRole = await admin("POST", "/Resources", {
      resourceType: "User",
      userName: "bad.role",
      roles: [{ value: "root" }],
    });
    problemOf(badRole, 400, "validation_failed");
    const consumer = await admin("POST", "/Resources", { resourceType: "OAuthConsumer", name: "C", colour: "red" });
    problemOf(consumer, 400, "validation_failed");
    const names = await admin("GET", "/Resources?resourcetypes=User,OAuthConsumer");
    expect(names.body).not.toMatch(/unknown\.|bad\.(active|role)/);
  });

  it("refuses a resource without a type", async () => {
    const response = await admin("POST", "/Resources", { userName: "typeless" });
    expect(problemOf(response, 400, "validation_failed").scimType).toBe("invalidValue");
  });

  it.each(["my Room", "room", " Room", "Room!", "Räum", "1Room", `R${"a".repeat(64)}`, ""])(
    "refuses the custom type name %j with 400 (scimType invalidValue)",
    async (resourceType) => {
      const response = await admin("POST", "/Resources", { resourceType, floor: 1 });
      const problem = problemOf(response, 400, "validation_failed");
      expect(problem.scimType).toBe("invalidValue");
    },
  );

  it("accepts a custom type name of 64 characters", async () => {
    const name = `R${"a".repeat(63)}`;
    const created = await createResource(admin, { resourceType: name, floor: 1 });
    expect(created.resourceType).toBe(name);
  });

  it("holds at most 64 KiB of attributes in a custom resource", async () => {
    // {"blob":"..."} is 11 bytes plus the text
    const exact = await admin("POST", "/Resources", { resourceType: "Blob", blob: "x".repeat(65536 - 11) });
    expect(exact.statusCode, exact.body.slice(0, 300)).toBe(201);
    const over = await admin("POST", "/Resources", { resourceType: "Blob", blob: "x".repeat(65536 - 10) });
    const problem = problemOf(over, 400, "validation_failed");
    expect(problem.scimType).toBe("invalidValue");
    expect(problem.detail).toContain("65536");
    // counted in bytes, not characters
    const wide = await admin("POST", "/Resources", { resourceType: "Blob", blob: "é".repeat(33_000) });
    problemOf(wide, 400, "validation_failed");
    // and on PUT
    const id = exact.json().id as string;
    problemOf(
      await admin("PUT", `/Resources/${id}`, { resourceType: "Blob", blob: "x".repeat(70_000) }),
      400,
      "validation_failed",
    );
    expect((await admin("GET", `/Resources/${id}`)).headers.etag).toBe('"1"');
    const list = await admin("GET", "/Resources?resourcetypes=Blob&count=0");
    expect(list.json().totalResults).toBe(1);
  });
});

describe("resources: passwords, sessions and users' lives", () => {
  const server = useTestServer();
  const admin = server.call;

  const newUser = (userName: string, extra: Json = {}) =>
    createResource(admin, { resourceType: "User", userName, ...extra });
  /** a user of this role written into the store, and logged in */
  const signedIn = (userName: string, role: "admin" | "support" | "member" = "member") =>
    server.signIn({ userName, password: OTHER_PASSWORD, roles: [role] });
  const refusesLogin = async (userName: string, password: string) =>
    problemOf(await tryLogin(server.app, userName, password), 401, "invalid_credentials");

  it("never shows a password or its hash: not on create, GET, list, PUT, nor through a filter", async () => {
    const created = await admin("POST", "/Resources", {
      resourceType: "User",
      userName: "secretive",
      password: TEMP_PASSWORD,
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().id as string;
    const put = await admin("PUT", `/Resources/${id}`, {
      resourceType: "User",
      userName: "secretive",
      password: OTHER_PASSWORD,
    });
    expect(put.statusCode).toBe(200);
    const responses = [
      created,
      put,
      await admin("GET", `/Resources/${id}`),
      await admin("GET", "/Resources"),
      await admin("GET", "/Resources?resourcetypes=User&sortby=password"),
    ];
    for (const response of responses) {
      expect(response.statusCode).toBeLessThan(300);
      expect(response.body).not.toContain(TEMP_PASSWORD);
      expect(response.body).not.toContain(OTHER_PASSWORD);
      expect(response.body).not.toContain("$argon2");
      // no password member (passwordChangedAt, a time, is account state)
      expect(response.body).not.toMatch(/"password(?!ChangedAt"|State")/i);
    }
    // the password is no attribute: a filter cannot probe it
    for (const filter of ["password pr", `password eq "${OTHER_PASSWORD}"`, 'password sw "a"']) {
      const probe = await admin("GET", `/Resources?filter=${encodeURIComponent(filter)}`);
      expect(probe.json().totalResults, filter).toBe(0);
    }
  });

  it("lets a user created with a password log in with firstLogin true, and holds it at password_change_required", async () => {
    await newUser("temp.user", { password: TEMP_PASSWORD, roles: [{ value: "member" }] });
    const session = await login(server.app, "temp.user", TEMP_PASSWORD);
    expect(session.firstLogin).toBe(true);
    const user = caller(server.app, session.token);
    problemOf(await user("GET", "/api/crm/v1/events"), 403, "password_change_required");
    problemOf(await user("GET", "/Resources"), 403, "password_change_required");
    expect((await user("GET", "/auth/isFirstLogin")).json()).toEqual({ employeeId: session.user.id, firstLogin: true });
    // once changed, the way is open
    const changed = await user("POST", "/auth/ChangePassWithLastPass", {
      lastPassword: TEMP_PASSWORD,
      newPassword: NEW_PASSWORD,
    });
    expect(changed.statusCode).toBe(204);
    expect((await user("GET", "/api/crm/v1/events")).statusCode).toBe(200);
    expect((await admin("GET", `/Resources/${session.user.id}`)).json().firstLogin).toBe(false);
  });

  it("refuses a weak password on create", async () => {
    const weak = await admin("POST", "/Resources", { resourceType: "User", userName: "weak.pw", password: "short" });
    problemOf(weak, 400, "weak_password");
    const list = await admin("GET", `/Resources?filter=${encodeURIComponent('userName eq "weak.pw"')}`);
    expect(list.json().totalResults).toBe(0);
  });

  it("does not let a user created without a password log in (401)", async () => {
    await newUser("no.password");
    await refusesLogin("no.password", TEMP_PASSWORD);
  });

  it("disables a user with active:false: its live token answers 401 and its login fails; active:true restores login", async () => {
    const { call, ...user } = await signedIn("to.disable");
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
    const current = (await admin("GET", `/Resources/${user.id}`)).json() as Json;
    const disabled = await admin("PUT", `/Resources/${user.id}`, { ...current, active: false });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json().active).toBe(false);
    problemOf(await call("GET", "/auth/isLogged"), 401, "token_revoked");
    problemOf(await call("GET", "/api/crm/v1/events"), 401, "token_revoked");
    await refusesLogin(user.userName, user.password);
    // enabling it again lets it log in, but the old token stays revoked
    const enabled = await admin("PUT", `/Resources/${user.id}`, { ...current, active: true });
    expect(enabled.statusCode).toBe(200);
    expect((await login(server.app, user.userName, user.password)).firstLogin).toBe(false);
    problemOf(await call("GET", "/auth/isLogged"), 401, "token_revoked");
  });

  it("makes a password set by PUT temporary and ends the user's sessions", async () => {
    const { call, ...user } = await signedIn("reset.by.put");
    const current = (await admin("GET", `/Resources/${user.id}`)).json() as Json;
    expect(current.firstLogin).toBe(false);
    const put = await admin("PUT", `/Resources/${user.id}`, { ...current, password: TEMP_PASSWORD });
    expect(put.statusCode).toBe(200);
    expect(put.json().firstLogin).toBe(true);
    problemOf(await call("GET", "/auth/isLogged"), 401, "token_revoked");
    await refusesLogin(user.userName, user.password);
    expect((await login(server.app, user.userName, TEMP_PASSWORD)).firstLogin).toBe(true);
  });

  it("keeps the sessions of a user whose PUT changes neither password nor active", async () => {
    const { call, ...user } = await signedIn("keeps.session");
    const current = (await admin("GET", `/Resources/${user.id}`)).json() as Json;
    expect((await admin("PUT", `/Resources/${user.id}`, { ...current, title: "Clerk" })).statusCode).toBe(200);
    expect((await call("GET", "/auth/isLogged")).statusCode).toBe(200);
  });

  it("ends the sessions of a deleted user: its token answers 401", async () => {
    const { call, ...user } = await signedIn("to.delete", "support");
    expect((await call("GET", "/Resources")).statusCode).toBe(200);
    expect((await admin("DELETE", `/Resources/${user.id}`)).statusCode).toBe(204);
    problemOf(await call("GET", "/auth/isLogged"), 401, "token_revoked");
    problemOf(await call("GET", "/Resources"), 401, "token_revoked");
    await refusesLogin(user.userName, user.password);
  });

  it("does not let an admin delete its own user (409): last_admin when it is the last, conflict otherwise", async () => {
    problemOf(await admin("DELETE", `/Resources/${server.admin.id}`), 409, "last_admin");
    await insertUser(server.app, { userName: "second.admin", password: OTHER_PASSWORD, roles: ["admin"] });
    problemOf(await admin("DELETE", `/Resources/${server.admin.id}`), 409, "conflict");
    expect((await admin("GET", `/Resources/${server.admin.id}`)).statusCode).toBe(200);
  });

  it("lets support set a password or active but nothing else, and a refused PUT changes nothing", async () => {
    const { call } = await signedIn("sup.port", "support");
    const target = await newUser("support.target", { title: "Clerk" });
    const url = `/Resources/${target.id}`;
    const mixed = await call("PUT", url, { ...target, title: "Boss", password: TEMP_PASSWORD });
    problemOf(mixed, 403, "forbidden");
    const roles = await call("PUT", url, { ...target, roles: [{ value: "admin" }] });
    problemOf(roles, 403, "forbidden");
    const unchanged = (await admin("GET", url)).json() as Json;
    expect(unchanged).toEqual(target);
    const password = await call("PUT", url, { ...target, password: TEMP_PASSWORD });
    expect(password.statusCode, password.body).toBe(200);
    expect(password.json().firstLogin).toBe(true);
    const active = await call("PUT", url, { ...(password.json() as Json), active: false });
    expect(active.statusCode, active.body).toBe(200);
    expect(active.json().active).toBe(false);
    expect(active.json().title).toBe("Clerk");
    problemOf(await call("DELETE", url), 403, "forbidden");
    problemOf(await call("POST", "/Resources", { resourceType: "User", userName: "by.support" }), 403, "forbidden");
  });

  it("shows a member only its own User and the custom types", async () => {
    const { call, ...member } = await signedIn("mem.ber");
    const room = await createResource(admin, { resourceType: "Room", floor: 7 });
    const consumer = await createResource(admin, { resourceType: "OAuthConsumer", name: "Hidden" });
    const list = await call("GET", "/Resources?count=500");
    expect(list.statusCode).toBe(200);
    const ids = (list.json().Resources as Json[]).map((r) => r.id);
    expect(ids).toContain(member.id);
    expect(ids).toContain(room.id);
    expect(ids).not.toContain(consumer.id);
    expect(ids).not.toContain(server.admin.id);
    const types = new Set((list.json().Resources as Json[]).map((r) => r.resourceType));
    expect(types.has("OAuthConsumer")).toBe(false);
    expect((list.json().Resources as Json[]).filter((r) => r.resourceType === "User")).toHaveLength(1);
    // a filter does not reach past the policy either
    const probe = await call("GET", `/Resources?filter=${encodeURIComponent(`userName eq "${ADMIN_USER}"`)}`);
    expect(probe.json().totalResults).toBe(0);
    const consumers = await call("GET", "/Resources?resourcetypes=OAuthConsumer");
    expect(consumers.json().totalResults).toBe(0);
    problemOf(await call("GET", `/Resources/${server.admin.id}`), 404, "not_found");
    problemOf(await call("GET", `/Resources/${consumer.id}`), 404, "not_found");
    expect((await call("GET", `/Resources/${member.id}`)).statusCode).toBe(200);
    expect((await call("GET", `/Resources/${room.id}`)).statusCode).toBe(200);
  });
});
