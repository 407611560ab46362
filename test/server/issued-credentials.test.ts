import { beforeAll, describe, expect, it } from "vitest";
import * as resourcesRepo from "../../src/server/store/resources-repo.js";
import { outboxReader, recipientsOf, requestResetToken, resetLinkOf } from "../helpers/mail.js";
import { STORES } from "../helpers/postgres.js";
import {
  type Call,
  createResource,
  insertUser,
  loggedIn,
  NEW_PASSWORD,
  problemOf,
  TEMP_PASSWORD,
  USER_PASSWORD,
  useTestServer,
} from "../helpers/server.js";

/**
 * Credentials follow their issuer's privilege (spec 1.1): a temporary password, an invitation or
 * a reset link works only while whoever issued it may still issue it for the account as it is
 * now, and a link is void once the password changes (by any path), the account is disabled or
 * its roles change. Checked when the credential is used as well as when the account changes.
 */

/** what a link sets: none of the others, so that a login with it tells whether the link worked */
const THROUGH_LINK = "cobalt meadow ferry 8812 lichen";

type Json = Record<string, unknown>;
type Issuer = "admin" | "support";
type Change =
  | "nothing"
  | "title"
  | "own password change"
  | "temporary password by admin"
  | "disabled and enabled again"
  | "granted support"
  | "granted admin";

describe.each(STORES)("issued credentials on %s", (_store, start) => {
  // this file logs in far more often than a person would
  const server = useTestServer({ loginRateLimit: { max: 10_000, timeWindowMs: 60_000 } }, start);
  let support: Call;
  const staff: Record<Issuer, Call> = { admin: server.call, support: (...request) => support(...request) };
  let counter = 0;

  beforeAll(async () => {
    support = (await server.signIn({ userName: "sam.support", roles: ["support"] })).call;
  });

  interface User {
    id: string;
    userName: string;
    email: string;
  }

  /** An ordinary user with an address: with a password of its own, or none (awaiting an invitation). */
  async function ordinaryUser(withPassword: boolean): Promise<User> {
    const userName = `user${++counter}-${crypto.randomUUID().slice(0, 6)}`;
    const email = `${userName}@example.com`;
    if (withPassword) {
      const user = await insertUser(server.app, { userName, password: USER_PASSWORD, roles: ["member"], email });
      return { id: user.id, userName, email };
    }
    const created = await createResource(staff.admin, {
      resourceType: "User",
      userName,
      emails: [{ value: email, primary: true }],
    });
    return { id: String(created.id), userName, email };
  }

  const login = (userName: string, password: string) =>
    server.app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });

  /** GET, change, PUT as `who`; fails the test unless it answers 200. */
  async function put(who: Call, user: User, change: (current: Json) => Json): Promise<void> {
    const current = (await staff.admin("GET", `/Resources/${user.id}`)).json() as Json;
    const response = await who("PUT", `/Resources/${user.id}`, change(current));
    if (response.statusCode !== 200) throw new Error(`PUT answered ${response.statusCode}: ${response.body}`);
  }

  const withRoles =
    (...roles: string[]) =>
    (current: Json) => ({ ...current, roles: roles.map((value) => ({ value })) });

  async function makeChange(change: Change, user: User): Promise<void> {
    switch (change) {
      case "nothing":
        return;
      case "title":
        return put(staff.admin, user, (current) => ({ ...current, title: "Clerk" }));
      case "own password change": {
        const own = await loggedIn(server.app, user.userName);
        const changed = await own("POST", "/auth/ChangePassWithLastPass", {
          lastPassword: USER_PASSWORD,
          newPassword: NEW_PASSWORD,
        });
        expect(changed.statusCode, changed.body).toBe(204);
        return;
      }
      case "temporary password by admin":
        return put(staff.admin, user, (current) => ({ ...current, password: TEMP_PASSWORD }));
      case "disabled and enabled again":
        await put(staff.admin, user, (current) => ({ ...current, active: false }));
        return put(staff.admin, user, (current) => ({ ...current, active: true }));
      case "granted support":
        return put(staff.admin, user, withRoles("member", "support"));
      case "granted admin":
        return put(staff.admin, user, withRoles("member", "admin"));
    }
  }

  /** The token of the newest invitation to `user`, sent by `issuer`. */
  async function invitationToken(issuer: Issuer, user: User): Promise<string> {
    const sent = await staff[issuer]("POST", `/Resources/${user.id}/invitation`);
    expect(sent.statusCode, sent.body).toBe(202);
    await server.app.services.mailer.idle();
    const mails = (await outboxReader(server.dataDir).take()).filter((m) => recipientsOf(m).includes(user.email));
    return resetLinkOf(mails.at(-1)!).token;
  }

  const useLink = (token: string) =>
    server.app.inject({ method: "PUT", url: "/resetPassword", payload: { token, newPassword: THROUGH_LINK } });

  // ------------------------------------------------------------------ links
  const linkCases: { link: "reset" | `invitation by ${Issuer}`; change: Change; works: boolean }[] = [
    { link: "reset", change: "nothing", works: true },
    { link: "reset", change: "title", works: true },
    { link: "reset", change: "own password change", works: false },
    { link: "reset", change: "temporary password by admin", works: false },
    { link: "reset", change: "disabled and enabled again", works: false },
    { link: "reset", change: "granted support", works: false },
    { link: "reset", change: "granted admin", works: false },
    { link: "invitation by support", change: "nothing", works: true },
    { link: "invitation by support", change: "title", works: true },
    { link: "invitation by support", change: "granted support", works: false },
    { link: "invitation by support", change: "granted admin", works: false },
    { link: "invitation by support", change: "temporary password by admin", works: false },
    { link: "invitation by support", change: "disabled and enabled again", works: false },
    { link: "invitation by admin", change: "nothing", works: true },
    { link: "invitation by admin", change: "granted admin", works: false },
  ];

  it.each(linkCases)("a $link after '$change' works: $works", async ({ link, change, works }) => {
    const user = await ordinaryUser(link === "reset");
    const token =
      link === "reset"
        ? await requestResetToken(server, user)
        : await invitationToken(link === "invitation by admin" ? "admin" : "support", user);
    await makeChange(change, user);
    const used = await useLink(token);
    if (works) {
      expect(used.statusCode, used.body).toBe(204);
      expect((await login(user.userName, THROUGH_LINK)).statusCode).toBe(200);
    } else {
      problemOf(used, 400, "invalid_reset_token");
      expect((await login(user.userName, THROUGH_LINK)).statusCode).toBe(401);
    }
  });

  it("refuses a support-sent invitation on an account made privileged past the API, when it is used", async () => {
    const user = await ordinaryUser(false);
    const token = await invitationToken("support", user);
    await promotePastTheApi(user, "support");
    problemOf(await useLink(token), 400, "invalid_reset_token");
  });

  // ------------------------------------------------------------------ temporary passwords
  const temporaryCases: { issuer: Issuer; change: Change; works: boolean }[] = [
    { issuer: "support", change: "nothing", works: true },
    { issuer: "support", change: "title", works: true },
    { issuer: "support", change: "granted support", works: false },
    { issuer: "support", change: "granted admin", works: false },
    { issuer: "admin", change: "granted support", works: true },
    { issuer: "admin", change: "granted admin", works: true },
  ];

  it.each(temporaryCases)(
    "a temporary password set by $issuer, after '$change', works: $works",
    async ({ issuer, change, works }) => {
      const user = await ordinaryUser(true);
      await put(staff[issuer], user, (current) => ({ ...current, password: TEMP_PASSWORD }));
      // the holder logged in once with it (a first-login session, which may only change the password)
      const earlier = await loggedIn(server.app, user.userName, TEMP_PASSWORD);
      await makeChange(change, user);
      const answer = await login(user.userName, TEMP_PASSWORD);
      if (works) {
        expect(answer.statusCode, answer.body).toBe(200);
        expect((await earlier("GET", "/auth/isLogged")).statusCode).toBe(200);
        return;
      }
      problemOf(answer, 401, "invalid_credentials");
      // what it opened ends with it: the earlier session cannot set a password of its own
      problemOf(await earlier("GET", "/auth/isLogged"), 401, "token_revoked");
      const changed = await earlier("POST", "/auth/ChangePassWithLastPass", {
        lastPassword: TEMP_PASSWORD,
        newPassword: NEW_PASSWORD,
      });
      expect(changed.statusCode).toBe(401);
      // voided and recorded: the account has no password until an admin gives it one
      const state = (await staff.admin("GET", `/Resources/${user.id}`)).json() as Json;
      expect(state.passwordChangedAt).toBeUndefined();
      const trail = (
        await staff.admin("GET", `/audit?filter=${encodeURIComponent(`target.id eq "${user.id}"`)}`)
      ).json() as {
        data: { action: string; details?: Json }[];
      };
      expect(trail.data.find((r) => r.action === "password.void")?.details).toEqual({ issuerRole: "support" });
      // an admin's temporary password works again
      await put(staff.admin, user, (current) => ({ ...current, password: TEMP_PASSWORD }));
      expect((await login(user.userName, TEMP_PASSWORD)).statusCode).toBe(200);
    },
  );

  it("refuses a support-set temporary password on an account made privileged past the API, when it is used", async () => {
    const user = await ordinaryUser(true);
    await put(staff.support, user, (current) => ({ ...current, password: TEMP_PASSWORD }));
    await promotePastTheApi(user, "admin");
    const refused = problemOf(await login(user.userName, TEMP_PASSWORD), 401, "invalid_credentials");
    expect(refused.detail).toMatch(/set by support staff/);
  });

  /** Gives the user a role by writing the store directly, as a path that forgot the rules would. */
  async function promotePastTheApi(user: User, role: string): Promise<void> {
    const db = server.app.services.store.db;
    const row = (await resourcesRepo.findResource(db, user.id))!;
    const attributes = { ...(JSON.parse(row.attributes) as Json), roles: [{ value: role }] };
    const {
      first_login,
      has_password,
      failed_logins,
      locked_until,
      last_login_at,
      password_changed_at,
      issuer_role,
      open_sessions,
      invited,
      mfa_enabled,
      ...plain
    } = row;
    const written = await resourcesRepo.replaceResource(
      db,
      { ...plain, attributes: JSON.stringify(attributes), version: row.version + 1 },
      row.version,
    );
    expect(written).toBe(true);
  }
});
