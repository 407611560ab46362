import { ROLES, type Role } from "../../contract/route.js";
import { GROUP_PATCH_MAX_MEMBERS, SCIM_URN } from "../../contract/scim.js";
import { parsePatchPath } from "../filter/patch-path.js";
import { invalid, ProblemError } from "../problem-error.js";
import type { PatchRequest } from "./resource-patch.js";

// What a request asks of a Group, read from the shapes Microsoft Entra ID and Okta send (spec
// 1.9): the name, the externalId, the roles and the member changes, before any of it is written.

type Attributes = Record<string, unknown>;

/** What one request changes of a group; absent members: unchanged. */
export interface GroupChange {
  displayName?: string;
  /** null: removed */
  externalId?: string | null;
  roles?: Role[];
  /** the whole member list (PUT, a replace of `members`, a remove of them all), before adds and removes */
  replaceMembers?: string[];
  add: Set<string>;
  remove: Set<string>;
}

const scimInvalid = (detail: string, path = "/", scimType = "invalidValue") => invalid(detail, path, scimType);

const isObject = (value: unknown): value is Attributes =>
  value !== null && typeof value === "object" && !Array.isArray(value);

const ROLES_PATH = `${SCIM_URN.groupRoles}:roles`.toLowerCase();
const CORE_PREFIX = `${SCIM_URN.group}:`.toLowerCase();

/** A displayName: a string of 1 to 256 characters, not blank. */
export function displayNameOf(value: unknown): string {
  if (typeof value !== "string" || value.trim() === "" || value.length > 256) {
    throw scimInvalid("displayName must be a non-empty string of at most 256 characters.", "/displayName");
  }
  return value;
}

function externalIdOf(value: unknown): string | null {
  if (value === null || value === "") return null;
  if (typeof value !== "string" || value.length > 256) {
    throw scimInvalid("externalId must be a string of at most 256 characters.", "/externalId");
  }
  return value;
}

/** The roles of the extension: `["admin"]` or `[{"value": "admin"}]`, each one of ROLES. */
export function rolesOf(value: unknown): Role[] {
  const list = value === null || value === undefined ? [] : Array.isArray(value) ? value : [value];
  const roles = list.map((item) => (isObject(item) ? item.value : item));
  const wrong = roles.find((role) => !(ROLES as readonly unknown[]).includes(role));
  if (wrong !== undefined) {
    throw scimInvalid(`roles must be among ${ROLES.join(", ")}; ${JSON.stringify(wrong)} is not.`, "/roles");
  }
  return ROLES.filter((role) => roles.includes(role));
}

/** Member ids of a `members` value: `[{"value": id}]`, Entra's `[{"$ref": null, "value": id}]`, or one object. */
export function memberIdsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map((item, index) => {
    const id = isObject(item) ? item.value : undefined;
    if (typeof id !== "string" || id === "" || id.length > 256) {
      throw scimInvalid("Each member must be an object whose value is a User's id.", `/members/${index}/value`);
    }
    if (isObject(item) && item.type !== undefined && item.type !== null && item.type !== "User") {
      throw scimInvalid("Members are Users: a group cannot hold a group.", `/members/${index}/type`);
    }
    return id;
  });
}

/** The name of a path without the core schema's URN, in lower case. */
const plainPath = (path: string) => {
  const lower = path.trim().toLowerCase();
  return lower.startsWith(CORE_PREFIX) ? lower.slice(CORE_PREFIX.length) : lower;
};

/** The roles an extension object carries, if it names them. */
function extensionRoles(body: Attributes): Role[] | undefined {
  const key = Object.keys(body).find((name) => name.toLowerCase() === SCIM_URN.groupRoles.toLowerCase());
  if (key === undefined) return undefined;
  const extension = body[key];
  if (extension === null) return [];
  if (!isObject(extension)) throw scimInvalid(`'${key}' must be an object with roles.`, `/${key}`);
  const rolesKey = Object.keys(extension).find((name) => name.toLowerCase() === "roles");
  return rolesKey === undefined ? undefined : rolesOf(extension[rolesKey]);
}

/** A whole group as POST and PUT send it. */
export function groupBody(body: Attributes): GroupChange & { displayName: string } {
  const find = (name: string) => Object.keys(body).find((key) => key.toLowerCase() === name.toLowerCase());
  const nameKey = find("displayName");
  const externalKey = find("externalId");
  const membersKey = find("members");
  const roles = extensionRoles(body);
  const members = membersKey === undefined ? [] : memberIdsOf(body[membersKey]);
  return {
    displayName: displayNameOf(nameKey === undefined ? undefined : body[nameKey]),
    externalId: externalKey === undefined ? null : externalIdOf(body[externalKey]),
    ...(roles !== undefined && { roles }),
    replaceMembers: [...new Set(members)],
    add: new Set(),
    remove: new Set(),
  };
}

/** The member id a remove's value filter names: `members[value eq "id"]`. */
function filteredMember(path: string): string {
  const parsed = parsePatchPath(path);
  const filter = parsed.filter as { op?: string; attrPath?: string; compValue?: unknown } | undefined;
  if (
    parsed.attribute.toLowerCase() !== "members" ||
    parsed.subAttribute !== undefined ||
    filter?.op !== "eq" ||
    filter.attrPath?.toLowerCase() !== "value" ||
    typeof filter.compValue !== "string"
  ) {
    throw scimInvalid(
      `'${path}' is not a path this server takes: use members or members[value eq "id"].`,
      "/path",
      "invalidPath",
    );
  }
  return filter.compValue;
}

function addMembers(change: GroupChange, ids: string[]) {
  for (const id of ids) {
    change.add.add(id);
    change.remove.delete(id);
  }
}

function removeMembers(change: GroupChange, ids: string[]) {
  for (const id of ids) {
    change.remove.add(id);
    change.add.delete(id);
  }
}

/** An attribute set by a path-less replace or add, or by its own path. */
function setAttribute(change: GroupChange, name: string, value: unknown, op: string) {
  if (name === "displayname") change.displayName = displayNameOf(value);
  else if (name === "externalid") change.externalId = externalIdOf(value);
  else if (name === ROLES_PATH || name === "roles") change.roles = rolesOf(value);
  else if (name === SCIM_URN.groupRoles.toLowerCase()) {
    const roles = extensionRoles({ [SCIM_URN.groupRoles]: value });
    if (roles !== undefined) change.roles = roles;
  } else if (name === "members") {
    const ids = memberIdsOf(value);
    if (op === "replace") {
      change.replaceMembers = [...new Set(ids)];
      change.add.clear();
      change.remove.clear();
    } else addMembers(change, ids);
  } else if (name !== "id" && name !== "schemas" && name !== "meta") {
    throw scimInvalid(`A Group has no attribute '${name}' a PATCH may set.`, "/path", "invalidPath");
  }
}

/** The operations of a PATCH as one change, in their order; 400 past GROUP_PATCH_MAX_MEMBERS member changes. */
export function patchChange(request: PatchRequest): GroupChange {
  if (!request.schemas.includes(SCIM_URN.patchOp)) {
    throw scimInvalid(`A PATCH request's schemas must include ${SCIM_URN.patchOp}.`, "/schemas", "invalidSyntax");
  }
  const change: GroupChange = { add: new Set(), remove: new Set() };
  let memberChanges = 0;
  for (const operation of request.Operations) {
    const op = operation.op.toLowerCase();
    if (op !== "add" && op !== "remove" && op !== "replace") {
      throw scimInvalid(`'${operation.op}' is not a PATCH operation (add, remove or replace).`, "/op", "invalidSyntax");
    }
    const path = operation.path === undefined || operation.path.trim() === "" ? undefined : operation.path;
    if (path === undefined) {
      if (op === "remove") throw scimInvalid("A remove needs a path.", "/path", "noTarget");
      if (!isObject(operation.value)) throw scimInvalid("Without a path, the value must be an object of attributes.");
      for (const [name, value] of Object.entries(operation.value)) {
        setAttribute(change, plainPath(name), value, op);
        if (plainPath(name) === "members") memberChanges += memberIdsOf(value).length;
      }
    } else if (path.includes("[")) {
      if (op !== "remove")
        throw scimInvalid("Only a remove may name a member by a value filter.", "/path", "invalidPath");
      removeMembers(change, [filteredMember(path)]);
      memberChanges++;
    } else if (op === "remove") {
      const name = plainPath(path);
      if (name === "members") {
        // Entra names the members to remove in the value; with none, every member goes
        if (operation.value === undefined || operation.value === null) {
          change.replaceMembers = [];
          change.add.clear();
          change.remove.clear();
        } else {
          const ids = memberIdsOf(operation.value);
          removeMembers(change, ids);
          memberChanges += ids.length;
        }
      } else if (name === "externalid") change.externalId = null;
      else if (name === ROLES_PATH || name === "roles") change.roles = [];
      else throw scimInvalid(`'${path}' cannot be removed from a Group.`, "/path", "mutability");
    } else {
      setAttribute(change, plainPath(path), operation.value, op);
      if (plainPath(path) === "members") memberChanges += memberIdsOf(operation.value).length;
    }
    if (memberChanges > GROUP_PATCH_MAX_MEMBERS) {
      throw new ProblemError(
        "validation_failed",
        `One PATCH may change at most ${GROUP_PATCH_MAX_MEMBERS} members; send the rest in further PATCH requests.`,
        {
          scimType: "tooMany",
          errors: [{ path: "/Operations", message: `more than ${GROUP_PATCH_MAX_MEMBERS} member changes` }],
        },
      );
    }
  }
  return change;
}
