import type { Static } from "@sinclair/typebox";
import type { UserInput } from "../../contract/resources.js";
import type { Role } from "../../contract/route.js";
import type { ResourceWithLogin } from "../store/resources-repo.js";
import { actorOf, refusalsRecorded } from "./audit.js";
import { type IssuerRole, issuerRoleOf, issuerStillMay } from "./issued-credentials.js";
import { userRolesOf } from "./last-admin.js";
import { assertAcceptablePassword, hashPassword } from "./passwords.js";
import { type ChangeRecord, sameJson, userChangeRecords } from "./resource-audit.js";
import { type Attributes, defaultUserAttributes, scimInvalid } from "./resource-bodies.js";
import { assertCan, can, type ResourceAction } from "./resource-policy.js";
import { serviceAccountRefusal } from "./service-account-rules.js";
import type { Principal, ServiceContext } from "./service-context.js";

// What a PUT of a User changes besides its row: the permissions it needs, its password, its
// sessions and pending links, and the records of each kind of change.

export type UserBody = Static<typeof UserInput>;

/** What a replacement writes with the resource's new row, in its transaction. */
export interface Replacement {
  attributes: Attributes;
  credential?: { passwordHash: string | null; firstLogin: true; issuerRole?: IssuerRole };
  revokeSessions: boolean;
  voidLinks: boolean;
  records: ChangeRecord[];
  /** the User's e-mail addresses change */
  addressesChanged?: boolean;
}

/** Whether the User's pending temporary password was set under a role that may not set one for `next`. */
function voidsTemporaryPassword(current: ResourceWithLogin, next: { id: string; roles: Role[] }): boolean {
  return current.first_login === 1 && !issuerStillMay(current.issuer_role ?? null, "temporaryPassword", next);
}

function sortKeys(value: Attributes): Attributes {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}

/** Where the account's mail goes: each address (in any case) and which one is primary. */
const addressesOf = (attributes: Attributes) =>
  (Array.isArray(attributes.emails) ? (attributes.emails as { value?: unknown; primary?: unknown }[]) : [])
    .map((email) => `${String(email?.value ?? "").toLowerCase()} ${email?.primary === true}`)
    .sort();

/**
 * Which permissions a User replacement needs, from what it changes. An e-mail change is an update
 * that also needs `changeEmails`, last, so that the others keep the index of their record.
 */
function userActions(current: Attributes, next: Attributes, body: UserBody): ResourceAction[] {
  const actions: ResourceAction[] = [];
  const { roles: currentRoles, active: currentActive, ...currentRest } = current;
  const { roles: nextRoles, active: nextActive, ...nextRest } = next;
  if (!sameJson(currentRoles, nextRoles)) actions.push("changeRoles");
  if ((currentActive ?? true) !== (nextActive ?? true)) actions.push("setActive");
  if (body.password !== undefined) actions.push("setPassword");
  if (!sameJson(sortKeys(currentRest), sortKeys(nextRest))) actions.push("update");
  if (!sameJson(addressesOf(current), addressesOf(next))) actions.push("changeEmails");
  return actions;
}

/** Refuses the members a replacement may not set: the hash of an import, firstLogin. */
function assertWritable(current: ResourceWithLogin, body: UserBody, userName: string): void {
  if (current.service_account === 1 && body.password !== undefined) {
    throw serviceAccountRefusal(userName, "have a password");
  }
  if (body.passwordHash !== undefined) {
    throw scimInvalid(
      "passwordHash is accepted only when a user is created (an import); set a password with 'password' or a reset link.",
      "/passwordHash",
      "mutability",
    );
  }
  const currentFirstLogin = current.first_login === 1;
  if (body.firstLogin !== undefined && body.firstLogin !== currentFirstLogin) {
    throw scimInvalid("'firstLogin' is read-only.", "/firstLogin", "mutability");
  }
}

/**
 * The replacement of a User by `body` (its attributes `checked`), once `principal` is found to
 * hold every permission it needs; a refusal is recorded as the change it refused.
 */
export async function planUserReplacement(
  ctx: ServiceContext,
  principal: Principal,
  current: ResourceWithLogin,
  currentAttributes: Attributes,
  checked: Attributes,
  body: UserBody,
  auditTarget: { type: string; id: string; name?: string },
): Promise<Replacement> {
  const id = current.id;
  const attributes = defaultUserAttributes(checked);
  assertWritable(current, body, String(currentAttributes.userName));
  const target = { id, roles: userRolesOf(currentAttributes, current.group_roles) };
  const actions = userActions(currentAttributes, attributes, body);
  const records = userChangeRecords(currentAttributes, attributes, actions);
  await refusalsRecorded(
    ctx,
    (error) => {
      if (error.code !== "forbidden") return undefined;
      const action = actions.find((one) => !can(principal, one, "User", target));
      // an e-mail change is recorded as the update it is part of
      const refused = action && records[actions.indexOf(action === "changeEmails" ? "update" : action)];
      return refused && { ...refused, actor: actorOf(principal), origin: principal.origin, target: auditTarget };
    },
    async () => {
      for (const action of actions) assertCan(principal, action, "User", target);
    },
  );
  let credential: Replacement["credential"];
  let revokeSessions = false;
  if (body.password !== undefined) {
    await assertAcceptablePassword(body.password, { userName: String(attributes.userName) }, ctx.passwordPolicy);
    credential = {
      passwordHash: await hashPassword(body.password),
      firstLogin: true,
      issuerRole: issuerRoleOf(principal),
    };
    revokeSessions = true;
  } else if (voidsTemporaryPassword(current, { id, roles: userRolesOf(attributes, current.group_roles) })) {
    // promoted beyond what the temporary password's issuer may set: it goes, with what it opened
    credential = { passwordHash: null, firstLogin: true };
    revokeSessions = true;
    records.push({ action: "password.void", details: { issuerRole: current.issuer_role } });
  }
  if (attributes.active === false) revokeSessions = true;
  // a pending reset or invitation link never outlives a disable or a change of roles
  const voidLinks = actions.includes("changeRoles") || actions.includes("setActive");
  return {
    attributes,
    ...(credential && { credential }),
    revokeSessions,
    voidLinks,
    records,
    addressesChanged: actions.includes("changeEmails"),
  };
}
