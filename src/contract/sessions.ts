import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { RESOURCES_PATH } from "./resources.js";
import { defineRoute, EVERYONE, STAFF } from "./route.js";

/** One open session: where and when it was opened, and when it was last used (to the minute). */
export const Session = Type.Object({
  id: Type.String(),
  created: Timestamp,
  lastUsed: Type.Optional(Timestamp),
  expires: Timestamp,
  clientIp: Type.Optional(Type.String()),
  userAgent: Type.Optional(Type.String()),
  /** only in the caller's own list: the session of the presented credential */
  current: Type.Optional(Type.Boolean()),
});

const SessionList = Type.Object({ sessions: Type.Array(Session) });
const Ended = Type.Object({ ended: Type.Integer({ description: "how many open sessions were ended" }) });

const SessionParams = Type.Object({ sessionId: Type.String({ maxLength: 128 }) });
const UserParams = Type.Object({ resourceId: Type.String({ maxLength: 256 }) });
const UserSessionParams = Type.Object({
  resourceId: Type.String({ maxLength: 256 }),
  sessionId: Type.String({ maxLength: 128 }),
});

export const listOwn = defineRoute({
  id: "auth.sessions.list",
  method: "GET",
  path: "/auth/sessions",
  summary: "The caller's open sessions; the one of the presented credential is marked current",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true },
  responses: { 200: SessionList },
});

export const endOwnOthers = defineRoute({
  id: "auth.sessions.endOthers",
  method: "DELETE",
  path: "/auth/sessions",
  summary: "End every open session of the caller except the current one",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true },
  responses: { 200: Ended },
});

export const endOwn = defineRoute({
  id: "auth.sessions.end",
  method: "DELETE",
  path: "/auth/sessions/:sessionId",
  summary: "End one of the caller's sessions (the current one too: that is a logout)",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true },
  params: SessionParams,
  responses: { 204: null },
});

export const listOfUser = defineRoute({
  id: "resources.sessions.list",
  method: "GET",
  path: `${RESOURCES_PATH}/:resourceId/sessions`,
  summary: "A User's open sessions (admin and support)",
  tags: ["resources"],
  access: { roles: STAFF, managesAccount: true },
  params: UserParams,
  responses: { 200: SessionList },
});

export const endAllOfUser = defineRoute({
  id: "resources.sessions.endAll",
  method: "DELETE",
  path: `${RESOURCES_PATH}/:resourceId/sessions`,
  summary: "End every open session of a User (admin, or support on ordinary users)",
  tags: ["resources"],
  access: { roles: STAFF, managesAccount: true },
  params: UserParams,
  responses: { 200: Ended },
});

export const endOneOfUser = defineRoute({
  id: "resources.sessions.end",
  method: "DELETE",
  path: `${RESOURCES_PATH}/:resourceId/sessions/:sessionId`,
  summary: "End one open session of a User (admin, or support on ordinary users)",
  tags: ["resources"],
  access: { roles: STAFF, managesAccount: true },
  params: UserSessionParams,
  responses: { 204: null },
});

export const sessionRoutes = [listOwn, endOwnOthers, endOwn, listOfUser, endAllOfUser, endOneOfUser] as const;
