import type { Role } from "../route.js";
import type { Grant } from "./operations.js";

/** Who holds a role, in a sentence: "an admin". */
export const ROLE_WORDS: Record<Role, string> = { admin: "an admin", support: "support staff", member: "a member" };

export const GRANT_WORDS: Record<Grant, string> = {
  ...ROLE_WORDS,
  self: "the user itself",
  "support:ordinary": "support staff (on ordinary users)",
  "anyone:ordinary": "anyone (on ordinary users)",
};

export const rolesInWords = (roles: readonly string[]) =>
  roles.length > 0 ? `the caller holds ${roles.join(" and ")}` : "the caller holds no role";

/**
 * A refusal a person at a help desk can act on: who may do it (`only`), what the caller's account
 * is, and whom to ask, in place of a role list and a type name.
 */
export const withWhomToAsk = (only: string, yours: string) => `${only}, and ${yours}: ask an admin to do it.`;

/** Why a delegated credential is refused an account operation: one sentence for every such refusal. */
export const DELEGATED_REFUSAL =
  "An application acting for a user (OAuth token credentials) or an API token cannot manage accounts: sessions, passwords, invitations, grants, API tokens and the account's own e-mail addresses need the user's own login.";
