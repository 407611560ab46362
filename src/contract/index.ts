export * as access from "./access.js";
export * as apiTokens from "./api-tokens.js";
export * as audit from "./audit.js";
export * as auth from "./auth.js";
export * as bulk from "./bulk.js";
export * from "./common.js";
export * as deletedGroups from "./deleted-groups.js";
export * as deletedUsers from "./deleted-users.js";
export * as diagnosis from "./diagnosis.js";
export * from "./errors.js";
export * as events from "./events.js";
export * as invitations from "./invitations.js";
export * as mfa from "./mfa.js";
export * as oauth from "./oauth.js";
export * as resourcePatch from "./resource-patch.js";
export * as resources from "./resources.js";
export * from "./route.js";
export * as scim from "./scim.js";
export * as scimDiscovery from "./scim-discovery.js";
export * as scimGroups from "./scim-groups.js";
export * as scimUsers from "./scim-users.js";
export * as service from "./service.js";
export * as serviceAccounts from "./service-accounts.js";
export * as sessions from "./sessions.js";

import { accessRoutes } from "./access.js";
import { apiTokenRoutes } from "./api-tokens.js";
import { auditRoutes } from "./audit.js";
import { authRoutes } from "./auth.js";
import { bulkRoutes } from "./bulk.js";
import { deletedGroupRoutes } from "./deleted-groups.js";
import { deletedUserRoutes } from "./deleted-users.js";
import { diagnosisRoutes } from "./diagnosis.js";
import { eventRoutes } from "./events.js";
import { invitationRoutes } from "./invitations.js";
import { mfaRoutes } from "./mfa.js";
import { oauthRoutes } from "./oauth.js";
import { resourcePatchRoutes } from "./resource-patch.js";
import { resourceRoutes } from "./resources.js";
import type { RouteEntry } from "./route.js";
import { discoveryRoutes } from "./scim-discovery.js";
import { groupRoutes } from "./scim-groups.js";
import { userRoutes } from "./scim-users.js";
import { serviceRoutes } from "./service.js";
import { serviceAccountRoutes } from "./service-accounts.js";
import { sessionRoutes } from "./sessions.js";

/** Every operation the server registers and the client may call. */
export const allRoutes: readonly RouteEntry[] = [
  ...serviceRoutes,
  ...authRoutes,
  ...eventRoutes,
  ...resourceRoutes,
  ...resourcePatchRoutes,
  ...oauthRoutes,
  ...sessionRoutes,
  ...mfaRoutes,
  ...invitationRoutes,
  ...bulkRoutes,
  ...discoveryRoutes,
  ...userRoutes,
  ...groupRoutes,
  ...auditRoutes,
  ...apiTokenRoutes,
  ...diagnosisRoutes,
  ...accessRoutes,
  ...serviceAccountRoutes,
  ...deletedUserRoutes,
  ...deletedGroupRoutes,
];
