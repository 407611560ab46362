import { type TSchema, Type } from "@sinclair/typebox";
import { QueryInteger } from "./common.js";
import { LIST_COUNT } from "./resources.js";

// The shapes every SCIM endpoint's lists and reads share (/Users, /Groups): the paging and
// projection query parameters (RFC 7644 section 3.4.2.4, 3.4.2.5), the id in the path and the
// ListResponse. Names in lower case: SCIM's query parameter names are case-insensitive.

const AttributeList = (description: string) =>
  Type.Optional(Type.String({ maxLength: 2048, description: `comma-separated attribute paths ${description}` }));

/** RFC 7644 section 3.4.2.5: which attributes an answer holds; `excluded` says what leaving out does. */
export const projection = (excluded = "to leave out") => ({
  attributes: AttributeList("to return, beside id and schemas (RFC 7644 section 3.4.2.5)"),
  excludedattributes: AttributeList(excluded),
});

/** A read's query: the projection alone. */
export const ProjectionQuery = (excluded?: string) =>
  Type.Object(projection(excluded), { additionalProperties: false });

/** RFC 7644 section 3.4.2.4: a page by index. */
export const paging = {
  startindex: Type.Optional(QueryInteger({ description: "1-based index of the first result; below 1 means 1" })),
  count: Type.Optional(
    QueryInteger({
      description: `page size, default ${LIST_COUNT.default}; negative means 0, above ${LIST_COUNT.max} means ${LIST_COUNT.max}`,
    }),
  ),
};

export const IdParams = Type.Object({ id: Type.String({ maxLength: 256 }) });

/** A ListResponse (RFC 7644 section 3.4.2) of `item`s. */
export const ListResponse = <T extends TSchema>(item: T) =>
  Type.Object({
    schemas: Type.Array(Type.String()),
    totalResults: Type.Integer(),
    startIndex: Type.Integer(),
    itemsPerPage: Type.Integer(),
    Resources: Type.Array(item),
  });
