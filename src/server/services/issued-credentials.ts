import { createHash } from "node:crypto";
import { isIssuerRole } from "../../contract/policy/index.js";
import type { UserAccount } from "../store/users-repo.js";
import { type ResourceAction, roleMay } from "./resource-policy.js";

/**
 * Credentials that someone other than the account's holder issued: a temporary password, an
 * invitation, a reset link sent from the support desk. Each carries the privilege of its issuer,
 * checked when it is used as well as when it is issued: it records the role it was issued under
 * and works only while that role may still issue it for the account as the account is now. A
 * link also records the account's stamp, and works only while the account's password, roles,
 * enabled state and link address are what they were when it was sent.
 */

export { type IssuerRole, issuerRoleOf } from "../../contract/policy/index.js";

/** What each kind of issued credential lets its holder do, as the roles table names it. */
const ISSUED_AS: Record<"temporaryPassword" | "link", ResourceAction> = {
  temporaryPassword: "setPassword",
  link: "invite",
};

/** Whether a credential issued under `issuerRole` (null: by the user) still works for `account`. */
export function issuerStillMay(
  issuerRole: string | null,
  kind: keyof typeof ISSUED_AS,
  account: Pick<UserAccount, "id" | "roles">,
): boolean {
  if (issuerRole === null) return true;
  if (!isIssuerRole(issuerRole)) return false;
  return roleMay(issuerRole, ISSUED_AS[kind], { id: account.id, roles: account.roles });
}

/** A user's temporary password that its issuer may no longer give it (a support-set one on a promoted account). */
export function isVoidTemporaryPassword(account: UserAccount): boolean {
  return account.credential.firstLogin && !issuerStillMay(account.credential.issuerRole, "temporaryPassword", account);
}

/**
 * The account's security stamp: a digest of what a pending link must not outlive (when the
 * password was last set, the roles, whether the account is enabled, the address links are mailed
 * to). Derived, never stored on the account, so that no path that changes one of them can forget
 * to change it.
 */
export function accountStamp(account: Pick<UserAccount, "roles" | "active" | "credential" | "linkAddress">): string {
  const state = [
    account.credential.passwordChangedAt ?? "",
    [...account.roles].sort().join(","),
    account.active,
    // a link mailed to an address the account no longer sends to is not the account's any more
    account.linkAddress?.toLowerCase() ?? "",
  ];
  return createHash("sha256").update(JSON.stringify(state)).digest("base64url");
}
