import type { Static } from "@sinclair/typebox";
import { RESOURCES_PATH, type ResourceListQuery } from "../../contract/resources.js";
import { SCIM_URN } from "../../contract/scim.js";
import { invalid, ProblemError } from "../problem-error.js";
import { findGroup } from "../store/groups-repo.js";
import { parseListQuery, parseTypes } from "./resource-list-query.js";
import * as groups from "./scim-groups.js";
import type { Principal, ServiceContext } from "./service-context.js";

// Groups are also /Resources of type Group (spec 1.9). They live in tables of their own (members
// one row each), which the generic store and its filters do not read; so /Resources hands a Group
// to the groups service: a list of that type alone, a create of one, and a read or change of an
// id that no other resource has. A list of every type holds no Group.

type ListQuery = Static<typeof ResourceListQuery>;
type Attributes = Record<string, unknown>;

export const GROUP_TYPE = "Group";

/** Whether a body sent to POST /Resources is a Group: by its resourceType, or its SCIM schema. */
export function isGroupBody(body: Attributes): boolean {
  if (body.resourceType !== undefined) return body.resourceType === GROUP_TYPE;
  return Array.isArray(body.schemas) && body.schemas.includes(SCIM_URN.group);
}

/** The Group's own attributes: what /Resources adds to a body (its type) is not one of them. */
const groupBody = ({ resourceType: _type, ...body }: Attributes) => body;

/** A group as /Resources shows a resource: its type beside its id, its location under /Resources. */
export function asResource(ctx: ServiceContext, group: Attributes): Attributes {
  const meta = group.meta as Attributes | undefined;
  return {
    ...group,
    resourceType: GROUP_TYPE,
    ...(meta && { meta: { ...meta, location: `${ctx.publicUrl ?? ""}${RESOURCES_PATH}/${String(group.id)}` } }),
  };
}

/** Whether a list asks for Groups: Group alone, or 400. Its types only: the rest of the query is the list's to read. */
export function listsGroups(query: ListQuery): boolean {
  const types = parseTypes(query.resourcetypes);
  if (!types?.includes(GROUP_TYPE)) return false;
  if (types.length > 1) {
    throw invalid("Groups are listed alone: ask for resourcetypes=Group.", "/query/resourcetypes", "invalidValue");
  }
  return true;
}

/** GET /Resources?resourcetypes=Group: the groups' list, ordered by displayName as /Groups orders it. */
export async function listGroupResources(ctx: ServiceContext, principal: Principal, query: ListQuery) {
  const parsed = parseListQuery(query);
  const sortPath = parsed.sortBy?.slice(parsed.sortBy.lastIndexOf(":") + 1).toLowerCase();
  if ((sortPath !== undefined && sortPath !== "displayname") || parsed.descending) {
    throw invalid("Groups are sorted by displayName, ascending, only.", "/query/sortby", "invalidValue");
  }
  const list = await groups.listGroups(ctx, principal, {
    ...(query.filter !== undefined && { filter: query.filter }),
    startindex: parsed.startIndex,
    count: parsed.count,
  });
  return { ...list, Resources: list.Resources.map((group) => asResource(ctx, group)) };
}

export async function createGroupResource(ctx: ServiceContext, principal: Principal, body: Attributes) {
  const created = await groups.createGroup(ctx, principal, groupBody(body));
  return { ...created, body: asResource(ctx, created.body), location: `${RESOURCES_PATH}/${String(created.body.id)}` };
}

/**
 * Runs the operation on the resource of this id; when no resource has it and a group does (and
 * the types the request restricts to, if any, hold Group), the operation on the group instead.
 */
export async function resourceOrGroup<T>(
  ctx: ServiceContext,
  id: string,
  onResource: () => Promise<T>,
  onGroup: () => Promise<T>,
  /** the types the request restricts to: read only when no resource has the id */
  typesOf: () => readonly string[] | undefined = () => undefined,
): Promise<T> {
  try {
    return await onResource();
  } catch (error) {
    if (error instanceof ProblemError && error.code === "not_found") {
      const types = typesOf();
      const groupMayAnswer = !types?.length || types.includes(GROUP_TYPE);
      if (groupMayAnswer && (await findGroup(ctx.store.db, id))) return onGroup();
    }
    throw error;
  }
}
