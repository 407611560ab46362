import { type TSchema, Type } from "@sinclair/typebox";
import { ROLES } from "./route.js";

/** The largest magnitude a whole-number query parameter takes: nine digits. */
export const QUERY_INTEGER_LIMIT = 999_999_999;

/**
 * A whole-number query parameter. On the wire it is decimal digits, with `-` for a negative one
 * (`1e3`, `1.5`, `+1` or `abc` are refused, not coerced), of at most nine digits; `minimum` and
 * `maximum` narrow it where the operation has a range, which the contract then checks.
 */
export const QueryInteger = (options: { description: string; minimum?: number; maximum?: number }) =>
  Type.Integer({ minimum: -QUERY_INTEGER_LIMIT, maximum: QUERY_INTEGER_LIMIT, ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({ format: "date-time", description: "RFC 3339 date-time" });

export const RoleName = Type.Union(ROLES.map((role) => Type.Literal(role)));

export const UserSummary = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  displayName: Type.Optional(Type.String()),
  roles: Type.Array(RoleName),
});
