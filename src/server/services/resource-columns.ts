import { userNameKey } from "../../contract/resources.js";
import { ProblemError } from "../problem-error.js";
import { isUniqueViolation, isUniqueViolationOn } from "../store/errors.js";
import type { Attributes } from "./resource-bodies.js";

// The columns of a resource row its attributes fill, and the conflicts of its unique ones.

/** The conflict a unique key of a resource raised, as a problem. */
export function uniqueness(error: unknown, type: string, body: Attributes): never {
  if (isUniqueViolationOn(error, "external_id")) {
    throw new ProblemError("conflict", `Another ${type} has the externalId ${String(body.externalId)}.`, {
      errors: [{ path: "/externalId", message: "is taken by another resource of this type" }],
      scimType: "uniqueness",
    });
  }
  if (isUniqueViolation(error)) {
    throw new ProblemError("conflict", `A user named ${String(body.userName)} already exists.`, {
      scimType: "uniqueness",
    });
  }
  throw error;
}

/** The columns a resource's attributes fill besides `attributes`: what lists filter and sort on. */
export function indexedColumns(type: string, attributes: Attributes) {
  return {
    // unique per type; an empty one is none
    external_id:
      typeof attributes.externalId === "string" && attributes.externalId !== "" ? attributes.externalId : null,
    display_name: typeof attributes.displayName === "string" ? attributes.displayName : null,
    user_name_key: type === "User" ? userNameKey(String(attributes.userName)) : null,
    attributes: JSON.stringify(attributes),
  };
}
