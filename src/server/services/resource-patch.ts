import { SCHEMA_URN } from "../../contract/resources.js";
import { ENTERPRISE_ATTRIBUTES, SCIM_URN } from "../../contract/scim.js";
import { assertPreconditions, ChangedMeanwhile, etagOf, type Preconditions } from "../http/preconditions.js";
import { invalid, ProblemError } from "../problem-error.js";
import { applyPatch, type PatchOperation } from "./patch-operations.js";
import { readForChange, replaceResourceAt } from "./resources.js";
import { attributeSchema, schemaUrns } from "./scim-attributes.js";
import type { Principal, ServiceContext } from "./service-context.js";

// PATCH of a resource (RFC 7644 section 3.5.2): read it, apply the operations, and write the
// result as a PUT of it would, through the same replacement: its validation, uniqueness, roles,
// help-desk and delegated-credential rules, last-admin guard and audit records. No PATCH can do
// what the PUT of its result could not.

export interface PatchRequest {
  schemas: string[];
  Operations: PatchOperation[];
}

/**
 * At most this many attempts when other writers keep changing the resource between a PATCH's read
 * and its write. Each lost attempt means another write succeeded, so a PATCH loses at most once per
 * other writer of the resource at that moment: a provisioning client's burst of PATCHes to one
 * User, without If-Match, all apply.
 */
const ATTEMPTS = 64;

function assertPatchRequest(request: PatchRequest): void {
  if (!request.schemas.includes(SCIM_URN.patchOp)) {
    throw invalid(`A PATCH request's schemas must include ${SCIM_URN.patchOp}.`, "/schemas", "invalidSyntax");
  }
}

/**
 * Applies `request` to the resource `id` (of `type` only, when given: /Users/{id} is a User or
 * nothing) and answers as a PUT does. With If-Match, the resource must be at that version (412);
 * without, operations apply to whatever version is current when they are written.
 */
export async function patchResource(
  ctx: ServiceContext,
  principal: Principal,
  id: string,
  request: PatchRequest,
  preconditions?: Preconditions,
  type?: "User",
) {
  assertPatchRequest(request);
  for (let attempt = 1; ; attempt++) {
    const current = await readForChange(ctx, principal, id);
    if (type && current.type !== type)
      throw new ProblemError("not_found", `No resource with id ${id} of type ${type}.`);
    assertPreconditions(preconditions, etagOf(current.version));
    const attributes = applyPatch(current.attributes, request.Operations, {
      schema: attributeSchema(current.type),
      urns: schemaUrns(current.type),
      extensions: current.type === "User" ? { [SCHEMA_URN.enterpriseUser.toLowerCase()]: ENTERPRISE_ATTRIBUTES } : {},
    });
    try {
      return await replaceResourceAt(
        ctx,
        principal,
        id,
        { ...attributes, resourceType: current.type },
        current.version,
      );
    } catch (error) {
      // another write came between the read and this one: the operations apply again to it
      if (!(error instanceof ChangedMeanwhile) || attempt >= ATTEMPTS) throw error;
    }
  }
}
