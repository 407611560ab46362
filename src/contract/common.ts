import { type TSchema, Type } from "@sinclair/typebox";
import { ROLES } from "./route.js";

/** A query integer kept as text so that `1e3`, `1.5` or `abc` are refused instead of coerced. */
export const IntegerText = (description: string) => Type.String({ pattern: "^-?[0-9]{1,9}$", description });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({ format: "date-time", description: "RFC 3339 date-time" });

export const RoleName = Type.Union(ROLES.map((role) => Type.Literal(role)));

export const UserSummary = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  displayName: Type.Optional(Type.String()),
  roles: Type.Array(RoleName),
});
