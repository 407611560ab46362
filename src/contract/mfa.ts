import { Type } from "@sinclair/typebox";
import { Timestamp } from "./common.js";
import { RESOURCES_PATH } from "./resources.js";
import { defineRoute, EVERYONE, STAFF } from "./route.js";

/** The second-factor area (spec 1.7): the caller's own TOTP factor. */
export const TOTP_PATH = "/auth/mfa/totp";

/** A code as a person types it: six digits of an authenticator app, or a recovery code. */
export const OneTimeCode = Type.String({
  minLength: 1,
  maxLength: 64,
  description: "the 6-digit code of the authenticator app, or one of the recovery codes",
});

export const TotpEnrollment = Type.Object({
  secret: Type.String({ description: "the seed in base32 (RFC 4648), for an app that cannot read the URI" }),
  uri: Type.String({ description: "the otpauth:// key URI, to show as a QR code" }),
});

export const TotpActivation = Type.Object({
  enabled: Type.Literal(true),
  since: Timestamp,
  recoveryCodes: Type.Array(Type.String(), {
    description: "ten single-use codes that stand in for the app; shown this once, kept only as hashes",
  }),
});

export const TotpStatus = Type.Object({
  enabled: Type.Boolean(),
  /** an enrollment was started and awaits its first code */
  pending: Type.Boolean(),
  since: Type.Optional(Timestamp),
  recoveryCodesLeft: Type.Optional(Type.Integer({ minimum: 0 })),
});

export const startTotp = defineRoute({
  id: "auth.mfa.totp.enroll",
  method: "POST",
  path: TOTP_PATH,
  summary:
    "Start enrolling a TOTP second factor (RFC 6238: SHA-1, 6 digits, 30 s); a pending enrollment is replaced. Answers the seed once",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true, duringMfaEnrollment: true },
  errors: ["conflict"],
  responses: { 200: TotpEnrollment },
});

export const verifyTotp = defineRoute({
  id: "auth.mfa.totp.verify",
  method: "POST",
  path: `${TOTP_PATH}/verify`,
  summary: "Activate the pending TOTP factor with a first code; answers ten recovery codes, this once",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true, duringMfaEnrollment: true },
  body: Type.Object({ code: OneTimeCode }, { additionalProperties: false }),
  errors: ["invalid_otp", "account_locked", "not_found", "conflict"],
  responses: { 200: TotpActivation },
});

export const totpStatus = defineRoute({
  id: "auth.mfa.totp.status",
  method: "GET",
  path: TOTP_PATH,
  summary: "Whether the caller has an active TOTP factor, since when, and how many recovery codes are left",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true, duringMfaEnrollment: true },
  responses: { 200: TotpStatus },
});

export const removeTotp = defineRoute({
  id: "auth.mfa.totp.remove",
  method: "DELETE",
  path: TOTP_PATH,
  summary: "Remove the caller's TOTP factor and its recovery codes, proving the password and a code",
  tags: ["auth"],
  access: { roles: EVERYONE, managesAccount: true },
  body: Type.Object(
    { password: Type.String({ minLength: 1, maxLength: 4096 }), code: OneTimeCode },
    { additionalProperties: false },
  ),
  errors: ["invalid_credentials", "invalid_otp", "account_locked", "not_found"],
  responses: { 204: null },
});

/**
 * Support's reset (spec 1.7): a User who lost the device. The reason travels in the query, as
 * DELETE bodies are often dropped by proxies and HTTP libraries; it is free text for the audit
 * trail, never a secret.
 */
export const resetUserTotp = defineRoute({
  id: "resources.mfa.reset",
  method: "DELETE",
  path: `${RESOURCES_PATH}/:resourceId/mfa`,
  summary:
    "Remove a User's second factor (active or pending) and its recovery codes, end its sessions and mail it a notice (admin, or support on ordinary users); 404 when it has none",
  tags: ["resources"],
  access: { roles: STAFF, managesAccount: true },
  params: Type.Object({ resourceId: Type.String({ maxLength: 256 }) }),
  query: Type.Object(
    { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: "why, for the audit trail" })) },
    { additionalProperties: false },
  ),
  errors: ["forbidden"],
  responses: {
    200: Type.Object({
      sessionsEnded: Type.Integer({ minimum: 0, description: "how many open sessions were ended" }),
      noticeQueued: Type.Boolean({ description: "whether a notice went to the user's e-mail address" }),
    }),
  },
});

export const mfaRoutes = [startTotp, verifyTotp, totpStatus, removeTotp, resetUserTotp] as const;
