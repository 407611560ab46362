import type { Role } from "../route.js";
import type { Subject } from "./decide.js";

/**
 * The roles a credential issued to someone else (a temporary password, an invitation, a reset
 * link from the support desk) is issued under: it records the role and is worth what that role
 * may still do to the account (`roleMay`).
 */
export const ISSUER_ROLES = ["admin", "support"] as const satisfies readonly Role[];

export type IssuerRole = (typeof ISSUER_ROLES)[number];

export const isIssuerRole = (text: string): text is IssuerRole => (ISSUER_ROLES as readonly string[]).includes(text);

/** The role a staff member issues credentials under: the first of ISSUER_ROLES they hold (admin before support). */
export function issuerRoleOf(subject: Subject): IssuerRole {
  return ISSUER_ROLES.find((role) => subject.roles.includes(role)) ?? "support";
}
