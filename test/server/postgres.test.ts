// The same server on PostgreSQL (how several instances share one state), on a fresh database.
import { describe, expect, it } from "vitest";
import { startPostgresTestServer } from "../helpers/postgres.js";
import { ADMIN_PASSWORD, ADMIN_USER, login, problemOf, useTestServer } from "../helpers/server.js";

const server = useTestServer({}, startPostgresTestServer);
const call = server.call;

describe("on PostgreSQL", () => {
  it("is ready and keeps sessions: logout revokes the token", async () => {
    expect((await server.app.inject({ method: "GET", url: "/ready" })).statusCode).toBe(200);
    const other = await login(server.app, ADMIN_USER, ADMIN_PASSWORD);
    const headers = { authorization: `Bearer ${other.token}` };
    expect((await server.app.inject({ method: "POST", url: "/auth/logout", headers })).statusCode).toBe(204);
    const after = await server.app.inject({ method: "GET", url: "/auth/isLogged", headers });
    expect(after.json().code).toBe("token_revoked");
  });

  it("creates, orders, pages, filters, replaces and deletes events", async () => {
    for (const [code, name, startsAt, extra] of [
      ["A", "Alpha", "2027-01-03T09:00:00Z", { tags: ["vip"], customFields: { budget: 1200 } }],
      [
        "b",
        "Beta 100%",
        "2027-01-01T09:00:00Z",
        { attendees: [{ name: "Ann", email: "ann@example.com", status: "accepted" }] },
      ],
      ["C", "Gamma", "2027-01-02T09:00:00Z", { type: "webinar" }],
    ] as const) {
      expect((await call("POST", "/api/crm/v1/events", { code, name, startsAt, ...extra })).statusCode).toBe(201);
    }
    expect(
      (await call("POST", "/api/crm/v1/events", { code: "B", name: "dup", startsAt: "2027-01-01T00:00:00Z" }))
        .statusCode,
    ).toBe(409);
    const codes = async (query: string) =>
      (await call("GET", `/api/crm/v1/events?${query}`)).json().data.map((e: { code: string }) => e.code);
    expect(await codes("")).toEqual(["b", "C", "A"]);
    expect(await codes("order=-name")).toEqual(["C", "b", "A"]);
    expect(await codes("pagesize=2&page=2")).toEqual(["A"]);
    const filter = (f: string) => codes(`filter=${encodeURIComponent(f)}`);
    expect(await filter('tags eq "VIP"')).toEqual(["A"]);
    expect(await filter('attendees[status eq "accepted" and email ew "example.com"]')).toEqual(["b"]);
    expect(await filter("customFields.budget gt 1000")).toEqual(["A"]);
    expect(await filter('name co "100%"')).toEqual(["b"]);
    expect(await filter('type pr and startsAt ge "2027-01-02T00:00:00Z"')).toEqual(["C"]);
    expect(await filter('not (type eq "webinar")')).toEqual(["b", "A"]);

    const current = await call("GET", "/api/crm/v1/events/a");
    const stale = await call(
      "PUT",
      "/api/crm/v1/events/A",
      { name: "Alpha 2", startsAt: "2027-01-03T09:00:00Z" },
      { "if-match": '"9"' },
    );
    expect(stale.statusCode).toBe(412);
    const replaced = await call(
      "PUT",
      "/api/crm/v1/events/A",
      { name: "Alpha 2", startsAt: "2027-01-03T09:00:00Z" },
      { "if-match": current.headers.etag as string },
    );
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().tags).toBeUndefined();
    expect(
      (await call("DELETE", "/api/crm/v1/events/A", undefined, { "if-match": replaced.headers.etag as string }))
        .statusCode,
    ).toBe(204);
    expect((await call("GET", "/api/crm/v1/events/A")).statusCode).toBe(404);
  });

  it("creates users and filters and sorts resources in SQL", async () => {
    for (const [userName, email, title] of [
      ["bjensen", "bjensen@example.com", "Tour Guide"],
      ["jsmith", "js@example.org", undefined],
      ["Jdoe", "jdoe@example.com", "Engineer"],
    ] as const) {
      const created = await call("POST", "/Resources", {
        resourceType: "User",
        userName,
        title,
        emails: [{ value: email, type: "work" }],
      });
      expect(created.statusCode).toBe(201);
    }
    expect((await call("POST", "/Resources", { resourceType: "User", userName: "JSMITH" })).json().scimType).toBe(
      "uniqueness",
    );
    expect(
      (await call("POST", "/Resources", { resourceType: "Room", displayName: "Board", capacity: 12.5 })).statusCode,
    ).toBe(201);
    const names = async (query: string) =>
      (await call("GET", `/Resources?${query}`))
        .json()
        .Resources.map((r: { userName?: string; displayName?: string }) => r.userName ?? r.displayName);
    expect(await names(`filter=${encodeURIComponent('userName sw "j"')}&sortby=userName`)).toEqual(["Jdoe", "jsmith"]);
    expect(
      await names(
        `filter=${encodeURIComponent('emails[type eq "work" and value co "@example.com"]')}&sortby=userName&sortorder=descending`,
      ),
    ).toEqual(["Jdoe", "bjensen"]);
    expect(await names(`filter=${encodeURIComponent("capacity gt 12.25")}`)).toEqual(["Board"]);
    expect(await names(`filter=${encodeURIComponent("title pr")}&sortby=title`)).toEqual(["Jdoe", "bjensen"]);
    const list = (await call("GET", "/Resources?count=0")).json();
    expect(list.totalResults).toBe(5);
    expect(list.Resources).toEqual([]);
  });

  // PostgreSQL cannot hold NUL in text; these were 500 internal_error (found by the fuzzer)
  it.each([
    ["a path parameter", "GET", "/Resources/%00", undefined],
    ["an event code in the path", "DELETE", "/api/crm/v1/events/a%00b", undefined],
    ["an event name", "POST", "/api/crm/v1/events", { name: "a\u0000b", startsAt: "2027-01-01T00:00:00Z" }],
    ["a custom resource's attribute", "POST", "/Resources", { resourceType: "Widget", name: "a\u0000b" }],
    ["a login's user name", "POST", "/auth/login", { userName: "a\u0000", password: "x" }],
  ] as const)(
    "refuses NUL in %s with 400 validation_failed, and stores nothing",
    async (_what, method, url, payload) => {
      const events = (await call("GET", "/api/crm/v1/events")).json().total;
      const resources = (await call("GET", "/Resources?count=0")).json().totalResults;
      problemOf(await call(method, url, payload), 400, "validation_failed");
      expect((await call("GET", "/api/crm/v1/events")).json().total).toBe(events);
      expect((await call("GET", "/Resources?count=0")).json().totalResults).toBe(resources);
    },
  );
});
