import { Type } from "@sinclair/typebox";
import { QueryInteger, Timestamp } from "./common.js";
import { defineRoute, EVERYONE } from "./route.js";

export const AUDIT_PATH = "/audit";
export const AUDIT_PAGE_SIZE = { default: 50, max: 500 } as const;

/** One record of the audit trail. It is never edited; retention alone removes it. */
export const AuditRecord = Type.Object({
  id: Type.String({ description: "sorts in time order; also a position for `since`" }),
  time: Timestamp,
  actor: Type.Optional(
    Type.Object({
      id: Type.Optional(Type.String()),
      userName: Type.Optional(Type.String()),
      consumerId: Type.Optional(Type.String({ description: "the OAuth consumer acting for the user" })),
      apiTokenId: Type.Optional(Type.String({ description: "the user's API token the request came with" })),
      apiTokenName: Type.Optional(
        Type.String({ description: "that token's name when it acted (kept after the token is revoked)" }),
      ),
    }),
  ),
  action: Type.String(),
  target: Type.Optional(
    Type.Object({
      type: Type.String(),
      id: Type.Optional(Type.String()),
      name: Type.Optional(Type.String()),
    }),
  ),
  outcome: Type.String({ description: "`success`, or the problem code of a refused action" }),
  requestId: Type.Optional(Type.String()),
  clientIp: Type.Optional(Type.String()),
  userAgent: Type.Optional(Type.String()),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

/** The query of the list. */
export const AuditListQuery = Type.Object(
  {
    filter: Type.Optional(
      Type.String({
        maxLength: 65536,
        description:
          'SCIM filter over id, time, action, outcome, actor.id, actor.userName, actor.consumerId, actor.apiTokenId, actor.apiTokenName, target.type, target.id, target.name, requestId, clientIp, userAgent (`action eq "login" and outcome ne "success"`)',
      }),
    ),
    since: Type.Optional(
      Type.String({
        maxLength: 64,
        description: "an RFC 3339 time (records at or after it) or a record id (records after it)",
      }),
    ),
    until: Type.Optional(Type.String({ maxLength: 64, description: "an RFC 3339 time: records before it" })),
    order: Type.Optional(
      Type.Union([Type.Literal("newest"), Type.Literal("oldest")], { description: "default newest first" }),
    ),
    pagesize: Type.Optional(
      QueryInteger({
        minimum: 1,
        maximum: AUDIT_PAGE_SIZE.max,
        description: `page size, default ${AUDIT_PAGE_SIZE.default}`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        maxLength: 4096,
        description: "opaque position from the Link `next` of the previous page (same query)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const listAudit = defineRoute({
  id: "audit.list",
  method: "GET",
  path: AUDIT_PATH,
  summary:
    "The audit trail, newest first: admins read every record, support all but key operations, members the records where they are the actor or the target",
  tags: ["audit"],
  access: { roles: EVERYONE, scope: "audit:read" },
  query: AuditListQuery,
  queryNamesAnyCase: true,
  responses: {
    200: Type.Object({
      data: Type.Array(AuditRecord),
      pagesize: Type.Integer(),
      last: Type.Optional(
        Type.String({ description: "the id of this page's last record: `since` continues after it (oldest first)" }),
      ),
    }),
  },
});

export const auditRoutes = [listAudit] as const;
