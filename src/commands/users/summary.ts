import type { Context } from "../../cli/command-context.js";
import { SCHEMA_URN } from "../../contract/resources.js";
import { ACCOUNT_ATTRIBUTES } from "../../contract/scim.js";
import { forPerson } from "../verb-helpers.js";

type Attributes = Record<string, unknown>;

/**
 * First what a help desk asks about a user (who, how to reach it, may it log in: its password
 * state before the rest of the account state), then the rest.
 */
const FIRST = [
  ...new Set([
    "userName",
    "id",
    "name",
    "displayName",
    "emails",
    "roles",
    "active",
    "passwordState",
    ...ACCOUNT_ATTRIBUTES,
  ]),
];

/** What a table need not repeat: the schemas follow from the type, and meta is summed up below. */
const LEFT_OUT = new Set(["schemas", "resourceType", "meta", SCHEMA_URN.enterpriseUser]);

/** `name` as a person reads it: its formatted text, else its parts in order. */
function nameOf(name: unknown): string | undefined {
  if (name === null || typeof name !== "object") return typeof name === "string" ? name : undefined;
  const parts = name as Attributes;
  if (typeof parts.formatted === "string" && parts.formatted !== "") return parts.formatted;
  const ordered = ["honorificPrefix", "givenName", "middleName", "familyName", "honorificSuffix"]
    .map((key) => parts[key])
    .filter((part): part is string => typeof part === "string" && part !== "");
  return ordered.length > 0 ? ordered.join(" ") : undefined;
}

/** A manager is an id with, at times, its name: the name first, for a person. */
function managerOf(manager: unknown): unknown {
  if (manager === null || typeof manager !== "object") return manager;
  const { value, displayName } = manager as Attributes;
  return displayName ? `${String(displayName)} (${String(value)})` : value;
}

/**
 * A User as a person at a terminal reads it (`users get` on a table): one line an attribute, the
 * name and the manager as text rather than JSON, `meta` as when it was created and changed.
 * Data formats keep the record as the API answers it.
 */
export function userSummary(user: Attributes): Attributes {
  const summary: Attributes = {};
  const put = (key: string, value: unknown) => {
    // only an account that is not a person says so: on every other user it would be noise
    if (key === "serviceAccount" && value !== true) return;
    if (value !== undefined && value !== null && value !== "") summary[key] = value;
  };
  for (const key of FIRST) put(key, key === "name" ? nameOf(user.name) : user[key]);
  for (const [key, value] of Object.entries(user)) {
    if (key in summary || FIRST.includes(key) || LEFT_OUT.has(key)) continue;
    put(key, key === "manager" ? managerOf(value) : value);
  }
  const meta = (user.meta ?? {}) as Attributes;
  put("created", meta.created);
  put("lastModified", meta.lastModified);
  return summary;
}

/**
 * What a verb that writes a user prints: the summary `users get` shows (with what the verb adds,
 * as a one-time password), or the record and those additions in a data format.
 */
export function printUser(ctx: Context, user: Attributes, added: Attributes = {}): Promise<void> {
  return forPerson(ctx) ? ctx.print({ ...userSummary(user), ...added }) : ctx.print({ ...user, ...added });
}
