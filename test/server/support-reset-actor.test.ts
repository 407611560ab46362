import { describe, expect, it } from "vitest";
import { outboxReader, recipientsOf } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import { caller, insertUser, loggedIn, serverPerTest, USER_PASSWORD } from "../helpers/server.js";

/**
 * Every action support takes is audited with support as the actor (spec 1.11), a reset link it
 * asks for included: the forgot-password request is public, but when it carries a credential that
 * holds, the record names its holder; and the link carries the sender's role, so that one support
 * sent to a support account does not open it (spec 1.1).
 */

type Trail = { data: { actor?: { userName?: string }; target?: { name?: string } }[] };

describe.each(STORES)("a reset support asks for, on %s", (_store, start) => {
  const startServer = serverPerTest(start);

  it("names support as the actor; anonymous stays anonymous; a support-sent link to a support account is not sent", async () => {
    const server = await startServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } });
    const admin = await loggedIn(server.app, server.admin.userName, server.admin.password);
    const sue = await insertUser(server.app, { userName: "sue", password: USER_PASSWORD, roles: ["support"] });
    const support = await loggedIn(server.app, sue.userName);
    const jo = await insertUser(server.app, {
      userName: "jo",
      password: USER_PASSWORD,
      roles: ["member"],
      email: "jo@example.com",
    });
    const sam = await insertUser(server.app, {
      userName: "sam",
      password: USER_PASSWORD,
      roles: ["support"],
      email: "sam@example.com",
    });
    const outbox = outboxReader(server.dataDir);
    expect((await support("POST", "/renewPassword", { userName: jo.userName })).statusCode).toBe(202);
    expect((await caller(server.app)("POST", "/renewPassword", { userName: jo.userName })).statusCode).toBe(202);
    expect((await support("POST", "/renewPassword", { userName: sam.userName })).statusCode).toBe(202);
    await server.app.services.mailer.idle();
    const sent = await outbox.take();
    // a link support sends may not open a support account: it is not sent at all
    expect(sent.flatMap(recipientsOf)).toEqual(["jo@example.com", "jo@example.com"]);
    const filter = encodeURIComponent('action eq "password.reset_request"');
    const trail = (await admin("GET", `/audit?filter=${filter}`)).json() as Trail;
    const byTarget = (name: string) =>
      trail.data
        .filter((record) => record.target?.name === name)
        .map((record) => record.actor?.userName ?? null)
        .sort();
    expect(byTarget("jo")).toEqual(["sue", null].sort());
    expect(byTarget("sam")).toEqual(["sue"]);
  });
});
