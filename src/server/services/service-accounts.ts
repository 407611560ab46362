/**
 * Service accounts (spec 1.9): a User that is not a person. It has no password, no second factor
 * and no login; it acts only through API tokens an admin creates for it (with roles and scopes,
 * which narrow as any token's do). The routes let admins only in.
 */
import type { Static } from "@sinclair/typebox";
import type { CreateServiceAccount } from "../../contract/service-accounts.js";
import { formatTimestamp } from "../http/timestamps.js";
import { ProblemError } from "../problem-error.js";
import { findAccountById, roleNames } from "../store/users-repo.js";
import { type CreateInput, createTokenOf } from "./api-tokens.js";
import { prepareCreate, writeCreate } from "./resource-create.js";
import type { Principal, ServiceContext } from "./service-context.js";

interface Row {
  id: string;
  attributes: string;
  created_at: string;
}

function shown(row: Row) {
  const attributes = JSON.parse(row.attributes) as Record<string, unknown>;
  return {
    id: row.id,
    userName: String(attributes.userName),
    ...(typeof attributes.displayName === "string" && { displayName: attributes.displayName }),
    roles: roleNames(attributes),
    active: attributes.active !== false,
    created: formatTimestamp(new Date(row.created_at)),
  };
}

/** A User created as every User is (the same checks, uniqueness and audit record), marked as not a person. */
export async function createServiceAccount(
  ctx: ServiceContext,
  principal: Principal,
  input: Static<typeof CreateServiceAccount>,
) {
  const create = await prepareCreate(ctx, principal, {
    resourceType: "User",
    userName: input.userName,
    ...(input.displayName !== undefined && { displayName: input.displayName }),
    roles: [...new Set(input.roles)].map((value) => ({ value })),
    active: true,
  });
  create.row.service_account = 1;
  // no password: it is never given one, and nothing can set one later (user-replacement.ts)
  create.credential = undefined;
  await writeCreate(ctx, principal, create);
  return shown(create.row);
}

export async function listServiceAccounts(ctx: ServiceContext) {
  const rows = await ctx.store.db
    .selectFrom("resources")
    .select(["id", "attributes", "created_at"])
    .where("resource_type", "=", "User")
    .where("service_account", "=", 1)
    .orderBy("user_name_key")
    .execute();
  return { serviceAccounts: rows.map(shown) };
}

/** A token of a service account, made by an admin: the one way it ever acts. */
export async function createServiceAccountToken(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  input: CreateInput,
) {
  const account = await findAccountById(ctx.store.db, id);
  if (!account?.serviceAccount) throw new ProblemError("not_found", `No service account with id ${id}.`);
  return createTokenOf(ctx, principal, account, input);
}
