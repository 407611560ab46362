/**
 * The world the fuzzer runs in: one app with a caller of every kind (anonymous, member, support,
 * admin, a user whose first login is pending, OAuth token credentials), some data to aim at, and
 * the secrets no response may show to a caller they were not issued to.
 *
 * Valid fuzzed requests succeed and may log a caller out, demote it, delete it or its consumer.
 * `heal()` notices that (each caller proves its credential and role) and makes a fresh caller, so
 * no operation needs to be kept away from the fuzzer.
 */
import type { Role } from "../../src/contract/route.js";
import type { BuiltApp } from "../../src/server/app.js";
import { forgetNameFailures } from "../../src/server/services/accounts.js";
import { outboxReader, recipientsOf, resetLinkOf } from "./mail.js";
import { authHeader, type Credentials, createConsumer, INJECT_BASE, injectFlow, signer } from "./oauth.js";
import { bearer, insertUser, loginToken, type TestServer } from "./server.js";

export const CALLER_KINDS = ["anonymous", "member", "support", "admin", "pending", "oauth"] as const;
export type CallerKind = (typeof CALLER_KINDS)[number];

interface Caller {
  kind: CallerKind;
  userId?: string;
  userName?: string;
  password?: string;
  /** the Bearer JWT (for oauth: the owner's, used only to approve) */
  jwt?: string;
  oauth?: { consumer: { key: string; secret: string }; access: Credentials };
}

const ROLE_OF: Record<Exclude<CallerKind, "anonymous">, Role> = {
  member: "member",
  support: "support",
  admin: "admin",
  pending: "member",
  // the owner of the token credentials is an admin, so that they reach every operation
  oauth: "admin",
};

const PASSWORD = (kind: string, n: number) => `fuzz ${kind} passphrase number ${n} of many`;

export class FuzzWorld {
  private readonly callers = new Map<CallerKind, Caller>();
  /** secrets handed out during the run, by the caller they were issued to */
  private readonly issued = new Map<string, CallerKind>();
  private generation = 0;
  /** what the requests are sent to: inject's base for signing, or the listening URL */
  baseUrl = INJECT_BASE;

  constructor(
    readonly server: TestServer,
    private readonly adminJwt: string,
  ) {}

  get app(): BuiltApp {
    return this.server.app;
  }

  static async create(server: TestServer): Promise<FuzzWorld> {
    const adminJwt = await loginToken(server.app, server.admin.userName, server.admin.password);
    const world = new FuzzWorld(server, adminJwt);
    world.callers.set("anonymous", { kind: "anonymous" });
    world.callers.set("admin", {
      kind: "admin",
      userId: server.admin.id,
      userName: server.admin.userName,
      password: server.admin.password,
      jwt: adminJwt,
    });
    for (const kind of ["member", "support", "pending", "oauth"] as const) await world.renew(kind);
    await world.seed();
    return world;
  }

  /**
   * What support gave two ordinary users before an admin promoted them: a temporary password to
   * one, an invitation link to the other. Neither may ever work again, whatever the fuzzed
   * requests do to the two accounts afterwards (spec 1.1, credentials follow their issuer).
   */
  private readonly supportIssued: { temporary?: { id: string; userName: string; password: string }; link?: string } =
    {};

  /** Things for path parameters to hit: a victim user, a custom resource, events. */
  private async seed(): Promise<void> {
    const call = (method: "POST", url: string, payload: object) =>
      this.app.inject({ method, url, headers: bearer(this.adminJwt), payload });
    await this.seedSupportIssued();
    await insertUser(this.app, { userName: "victor.victim", password: PASSWORD("victim", 0), roles: ["member"] });
    await call("POST", "/Resources", { resourceType: "Widget", name: "w1", colour: "blue" });
    for (const code of ["KICKOFF", "e.1", "Review-2"]) {
      await call("POST", "/api/crm/v1/events", { code, name: code, startsAt: "2027-01-10T09:00:00Z" });
    }
  }

  private async seedSupportIssued(): Promise<void> {
    const support = this.callers.get("support")!.jwt!;
    const as = (jwt: string) => (method: "GET" | "PUT" | "POST", url: string, payload?: object) =>
      this.app.inject({ method, url, headers: bearer(jwt), ...(payload && { payload }) });
    const promote = async (id: string, role: Role) => {
      const current = (await as(this.adminJwt)("GET", `/Resources/${id}`)).json() as Record<string, unknown>;
      await as(this.adminJwt)("PUT", `/Resources/${id}`, { ...current, roles: [{ value: "member" }, { value: role }] });
    };
    const temporary = { userName: "sid.supported", password: PASSWORD("support-set", 0) };
    const sid = await insertUser(this.app, {
      userName: temporary.userName,
      password: PASSWORD("sid", 0),
      roles: ["member"],
    });
    const current = (await as(support)("GET", `/Resources/${sid.id}`)).json() as Record<string, unknown>;
    await as(support)("PUT", `/Resources/${sid.id}`, { ...current, password: temporary.password });
    await promote(sid.id, "admin");
    this.supportIssued.temporary = { id: sid.id, ...temporary };
    const ivy = await as(this.adminJwt)("POST", "/Resources", {
      resourceType: "User",
      userName: "ivy.invited",
      emails: [{ value: "ivy.invited@example.com", primary: true }],
    });
    const ivyId = (ivy.json() as { id: string }).id;
    await as(support)("POST", `/Resources/${ivyId}/invitation`);
    await this.app.services.mailer.idle();
    const mails = await outboxReader(this.server.dataDir).take();
    const invitation = mails.find((mail) => recipientsOf(mail).includes("ivy.invited@example.com"));
    if (invitation) this.supportIssued.link = resetLinkOf(invitation).token;
    await promote(ivyId, "support");
    this.issued.set(temporary.password, "support");
    if (this.supportIssued.link) this.issued.set(this.supportIssued.link, "support");
  }

  /** What is wrong if a credential support gave a since-promoted user works again; nothing otherwise. */
  async supportIssuedRevived(): Promise<string | undefined> {
    const { temporary, link } = this.supportIssued;
    if (temporary) {
      // its failed logins would back the name off, and a backed-off name is not tried at all
      await forgetNameFailures(this.app.services, temporary.userName);
      await this.app.services.store.db
        .updateTable("credentials")
        .set({ failed_logins: 0, locked_until: null })
        .where("user_id", "=", temporary.id)
        .execute();
      const { userName, password } = temporary;
      const login = await this.app.inject({ method: "POST", url: "/auth/login", payload: { userName, password } });
      if (login.statusCode === 200)
        return `the temporary password support set for ${temporary.userName} works after the promotion`;
    }
    if (link) {
      const reset = await this.app.inject({
        method: "PUT",
        url: "/resetPassword",
        payload: { token: link, newPassword: PASSWORD("through-the-link", 0) },
      });
      if (reset.statusCode < 400) return "the invitation support sent works after the promotion";
    }
    return undefined;
  }

  private async renew(kind: Exclude<CallerKind, "anonymous">): Promise<void> {
    this.generation++;
    const userName = `fuzz.${kind}.${this.generation}`;
    const password = PASSWORD(kind, this.generation);
    const user = await insertUser(this.app, {
      userName,
      password,
      roles: [ROLE_OF[kind]],
      temporary: kind === "pending",
    });
    const jwt = await loginToken(this.app, userName, password);
    const caller: Caller = { kind, userId: user.id, userName, password, jwt };
    if (kind === "oauth") {
      const consumer = await createConsumer(this.app, this.adminJwtNow(), { name: `fuzz consumer ${this.generation}` });
      this.issued.set(consumer.secret, "admin");
      caller.oauth = { consumer, access: (await injectFlow(this.app, consumer, jwt)).access };
    }
    this.callers.set(kind, caller);
  }

  private adminJwtNow(): string {
    return this.callers.get("admin")?.jwt ?? this.adminJwt;
  }

  /** The Authorization header of `kind` for this request (none for anonymous). */
  authorization(
    kind: CallerKind,
    method: string,
    pathAndQuery: string,
    form?: Record<string, string>,
  ): string | undefined {
    const caller = this.callers.get(kind)!;
    if (caller.oauth) {
      const oauth = signer(caller.oauth.consumer);
      try {
        return authHeader(oauth, { method, url: `${this.baseUrl}${pathAndQuery}`, data: form }, caller.oauth.access);
      } catch {
        // a URL the signing package cannot parse (a bad percent escape): the server must refuse it
        return `OAuth oauth_consumer_key="${caller.oauth.consumer.key}", oauth_token="${caller.oauth.access.token}"`;
      }
    }
    return caller.jwt && `Bearer ${caller.jwt}`;
  }

  /** Does each caller still hold a working credential of its kind? Makes a new one where not. */
  async heal(): Promise<void> {
    for (const kind of ["admin", "member", "support", "pending", "oauth"] as const) {
      if (!(await this.holds(kind))) await this.renew(kind);
    }
  }

  private async holds(kind: Exclude<CallerKind, "anonymous">): Promise<boolean> {
    const url = kind === "pending" ? "/auth/isFirstLogin" : "/auth/isLogged";
    const authorization = this.authorization(kind, "GET", url)!;
    const response = await this.app.inject({ method: "GET", url, headers: { authorization } });
    if (response.statusCode !== 200) return false;
    const body = response.json() as { firstLogin?: boolean; user?: { roles: string[] } };
    if (kind === "pending") return body.firstLogin === true;
    const roles = body.user?.roles ?? [];
    return roles.length === 1 && roles[0] === ROLE_OF[kind];
  }

  /** Every identifier in the database: what a path parameter or a query value may aim at. */
  async identifiers(): Promise<string[]> {
    const db = this.app.services.store.db;
    const [resources, events, sessions, tokens] = await Promise.all([
      db.selectFrom("resources").select(["id", "display_name"]).execute(),
      db.selectFrom("events").select("code").execute(),
      db.selectFrom("sessions").select("id").execute(),
      db.selectFrom("oauth_tokens").select("token").execute(),
    ]);
    return [
      ...resources.flatMap((r) => [r.id, r.display_name ?? r.id]),
      ...events.map((e) => e.code),
      ...sessions.map((s) => s.id),
      ...tokens.map((t) => t.token),
    ].sort();
  }

  /**
   * The secrets `kind` must never see in a response: every password and token of the world, the
   * secrets the database keeps, and whatever was issued during the run to someone else.
   */
  async secretsHiddenFrom(kind: CallerKind): Promise<string[]> {
    const db = this.app.services.store.db;
    const own = this.callers.get(kind)!;
    const out: string[] = [];
    for (const caller of this.callers.values()) {
      if (caller.password) out.push(caller.password);
      if (caller.kind !== kind && caller.jwt) out.push(caller.jwt);
      if (caller.kind !== kind && caller.oauth) out.push(caller.oauth.access.secret, caller.oauth.consumer.secret);
    }
    out.push(PASSWORD("victim", 0), this.server.admin.password);
    for (const [secret, to] of this.issued) if (to !== kind) out.push(secret);
    const [hashes, kept, tokens, temporary, resets] = await Promise.all([
      db.selectFrom("credentials").select("password_hash").execute(),
      db.selectFrom("resource_secrets").select("secret").execute(),
      db.selectFrom("oauth_tokens").select("secret").execute(),
      db.selectFrom("oauth_temporary_credentials").select(["secret", "verifier_hash"]).execute(),
      db.selectFrom("password_resets").select("token_hash").execute(),
    ]);
    out.push(
      ...hashes.flatMap((h) => (h.password_hash ? [h.password_hash] : [])),
      ...kept.map((k) => k.secret),
      ...tokens.map((t) => t.secret).filter((s) => s !== own.oauth?.access.secret),
      ...temporary.flatMap((t) => [t.secret, t.verifier_hash ?? ""]),
      ...resets.map((r) => r.token_hash),
    );
    // a part is as telling as the whole: a hash's salt or digest, a JWT's signature
    const parts = out.flatMap((s) => s.split(/[$.]/).filter((part) => part.length >= 16));
    return [...new Set([...out, ...parts])].filter((s) => s.length >= 8);
  }

  /** Remembers secrets a successful answer handed to `kind` (a new consumer's secret, a JWT). */
  noteIssued(kind: CallerKind, body: string): void {
    for (const match of body.matchAll(/"(\w*(?:[Ss]ecret|token))"\s*:\s*"([^"]{16,})"/g)) {
      if (match[1]!.toLowerCase().includes("secret") || match[2]!.split(".").length === 3)
        this.issued.set(match[2]!, kind);
    }
    for (const match of body.matchAll(/oauth_token_secret=([^&\s]+)/g)) this.issued.set(match[1]!, kind);
  }
}
