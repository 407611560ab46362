import type { Context } from "../cli/command-context.js";
import { CliError, EXIT, UsageError } from "../cli/errors.js";
import * as resources from "../contract/resources.js";

export type UserRecord = Record<string, unknown> & { id: string; userName: string };

/** The roles a User record holds (SCIM's `roles: [{value}]`): what the access policy asks of a target. */
export const rolesOf = (user: Record<string, unknown>): string[] =>
  ((user.roles ?? []) as { value?: unknown }[]).flatMap((role) => (typeof role.value === "string" ? [role.value] : []));

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The user a person names: by id, userName or e-mail, as support staff know them. */
export async function resolveUser(ctx: Context, reference: string): Promise<UserRecord> {
  if (reference.trim() === "") throw new UsageError("Name a user: an id, a user name or an e-mail address.");
  const client = await ctx.client();
  const literal = JSON.stringify(reference);
  const filter = UUID.test(reference)
    ? `id eq ${literal} or userName eq ${literal}`
    : `userName eq ${literal} or emails.value eq ${literal}`;
  const { data } = await client.call(resources.listResources, {
    query: { resourcetypes: "User", filter, count: 10 },
  });
  const found = data.Resources as unknown as UserRecord[];
  const exact = found.filter(
    (user) => user.id === reference || user.userName.toLowerCase() === reference.toLowerCase(),
  );
  if (exact.length === 1) return exact[0]!;
  if (found.length === 1) return found[0]!;
  if (found.length === 0) {
    throw new CliError(`No user '${reference}' (looked up by id, user name and e-mail).`, EXIT.notFound, "not_found");
  }
  const candidates = found.map((user) => `${user.userName} (${user.id})`).join(", ");
  throw new UsageError(
    `'${reference}' is the e-mail of ${data.totalResults} users: ${candidates}.`,
    "name the user by user name or id",
  );
}
