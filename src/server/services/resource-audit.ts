import { roleNames } from "../store/users-repo.js";
import type { AuditAction, AuditEntry } from "./audit.js";
import type { Attributes } from "./resource-bodies.js";
import type { ResourceAction } from "./resource-policy.js";

// How a change to a resource reads in the audit trail: its action, its target, what changed.

/** A record of a change, before its actor, origin and target are known. */
export type ChangeRecord = Omit<AuditEntry, "actor" | "origin" | "target">;

/** The audit action of a change to a resource of `type` (Users have their own, finer ones). */
export function resourceAction(type: string, change: "create" | "update" | "delete"): AuditAction {
  if (type === "User") return `user.${change}`;
  if (type === "OAuthConsumer") return `oauth.consumer.${change}`;
  return `resource.${change}`;
}

/** The name a person knows a resource by: a User's userName, a consumer's name, a displayName. */
function nameOf(type: string, attributes: Attributes): string | undefined {
  const name = type === "User" ? attributes.userName : (attributes.name ?? attributes.displayName);
  return typeof name === "string" ? name : undefined;
}

export function targetOf(type: string, id: string, attributes: Attributes) {
  const name = nameOf(type, attributes);
  return { type, id, ...(name !== undefined && { name }) };
}

export const sameJson = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** Names of the top-level attributes that differ: values are not kept (they may be personal data). */
export function changedNames(before: Attributes, after: Attributes): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  // own members only: an attribute named `toString` is compared, not the function every object has
  const own = (attributes: Attributes, key: string) => (Object.hasOwn(attributes, key) ? attributes[key] : undefined);
  return [...keys].filter((key) => !sameJson(own(before, key), own(after, key))).sort();
}

/** The records of a User replacement: one per kind of change (roles, enabled, password, the rest). */
export function userChangeRecords(current: Attributes, next: Attributes, actions: ResourceAction[]): ChangeRecord[] {
  const records: ChangeRecord[] = [];
  for (const action of actions) {
    if (action === "changeRoles") {
      records.push({ action: "user.roles", details: { from: roleNames(current), to: roleNames(next) } });
    } else if (action === "setActive") {
      records.push({ action: next.active === false ? "user.disable" : "user.enable" });
    } else if (action === "setPassword") {
      records.push({ action: "password.set", details: { temporary: true } });
    } else if (action === "update") {
      const { roles: _r, active: _a, ...before } = current;
      const { roles: _nr, active: _na, ...after } = next;
      records.push({ action: "user.update", details: { changed: changedNames(before, after) } });
    }
  }
  return records;
}
