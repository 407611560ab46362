import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { RESOURCES_PATH } from "./resources.js";
import { defineRoute, STAFF } from "./route.js";

export const sendInvitation = defineRoute({
  id: "resources.invitation.send",
  method: "POST",
  path: `${RESOURCES_PATH}/:resourceId/invitation`,
  summary:
    "Mail a User a single-use link that sets its first password; voids the older invitations (admin, or support on ordinary users)",
  tags: ["resources"],
  access: { roles: STAFF, managesAccount: true },
  errors: ["conflict", "service_account"],
  params: Type.Object({ resourceId: Type.String({ maxLength: 256 }) }),
  responses: {
    202: Type.Object({
      status: Type.Literal("queued"),
      email: Type.String({ description: "where the invitation goes" }),
      expiresAt: Timestamp,
    }),
  },
});

export const invitationRoutes = [sendInvitation] as const;
