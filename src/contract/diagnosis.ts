import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { routeAccess } from "./policy/index.js";
import { defineRoute } from "./route.js";
import { USERS_PATH } from "./scim-users.js";

/** The stable codes of the reasons a user cannot sign in or act (spec 1.11), in the order a login meets them. */
export const REASON_CODES = [
  "service_account",
  "locked",
  "disabled",
  "invitation_pending",
  "invitation_expired",
  "no_password",
  "temporary_password_void",
  "second_factor_lost",
  "mfa_enrollment_required",
  "temporary_password",
  "session_cap",
  "no_email",
  "reset_address_unconfirmed",
] as const;

export const DiagnosisReason = Type.Object({
  code: Type.Union(
    REASON_CODES.map((code) => Type.Literal(code)),
    { description: "stable: scripts branch on it" },
  ),
  effect: Type.Union([Type.Literal("refused"), Type.Literal("restricted"), Type.Literal("notice")], {
    description:
      "refused: no login works; restricted: a login works but may only do one thing; notice: a login works, and this is worth knowing",
  }),
  check: Type.String({ description: "the login's check that found it (its name in the login's list)" }),
  meaning: Type.String({ description: "what it means, for a person" }),
  since: Type.Optional(Timestamp),
  until: Type.Optional(Timestamp),
  details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  fix: Type.Optional(
    Type.Object({
      command: Type.Optional(
        Type.String({ description: "the command that fixes it; only when the caller may run it" }),
      ),
      operation: Type.Optional(Type.String({ description: "the policy operation the command is (access explain)" })),
      by: Type.Union([Type.Literal("caller"), Type.Literal("admin"), Type.Literal("user")], {
        description: "who can fix it: the caller (command given), an admin (ask one), or the user itself",
      }),
      text: Type.String({ description: "what to do, in words" }),
    }),
  ),
});

export const Diagnosis = Type.Object({
  id: Type.String(),
  userName: Type.String(),
  healthy: Type.Boolean({ description: "no reason found: the user can sign in and act" }),
  checkedAt: Timestamp,
  reasons: Type.Array(DiagnosisReason, { description: "in the order a login meets them" }),
  checks: Type.Array(Type.String(), { description: "the login's checks that ran, in order" }),
  notChecked: Type.Array(Type.Object({ code: Type.String(), why: Type.String() }), {
    description: "states spec 1.11 names that this server has nothing to check for",
  }),
});

/**
 * GET /Users/{id}/diagnosis (spec 1.11): every reason the user cannot sign in or act now, found by
 * the login's own checks (support and admin, as they may read the User).
 */
export const diagnoseUser = defineRoute({
  id: "users.diagnose",
  method: "GET",
  path: `${USERS_PATH}/:id/diagnosis`,
  summary:
    "Every reason a User cannot sign in or act now, in login order, with since, until and the fix the caller may run (admin and support)",
  tags: ["users"],
  // under /Users: answered as the SCIM endpoints there are (application/scim+json, errors too)
  scim: "wire",
  access: routeAccess("users:diagnose"),
  params: Type.Object({ id: Type.String({ maxLength: 256 }) }),
  errors: ["forbidden"],
  responses: { 200: Diagnosis },
});

export const diagnosisRoutes = [diagnoseUser] as const;
