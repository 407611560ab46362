import { Type } from "@sinclair/typebox";
import { ApiTokenScopeName } from "./api-tokens.js";
import { Timestamp, UserSummary } from "./common.js";
import { OneTimeCode } from "./mfa.js";
import { defineRoute, EVERYONE, STAFF } from "./route.js";

/** A login: the password, and for an account with a second factor its code (`otp`). */
export const LoginRequest = Type.Object(
  {
    userName: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: 4096 }),
    otp: Type.Optional(OneTimeCode),
  },
  { additionalProperties: false },
);

export const LoginResult = Type.Object({
  token: Type.String(),
  tokenType: Type.Literal("Bearer"),
  expiresAt: Timestamp,
  firstLogin: Type.Boolean(),
  /**
   * present (true) when the server requires a second factor of one of the user's roles
   * (`--require-mfa`) and the account has none: until it enrolls one, the token may only enroll
   */
  mfaEnrollmentRequired: Type.Optional(Type.Boolean()),
  /** present when the second factor was a recovery code (spent now): the unused codes left */
  recoveryCodesLeft: Type.Optional(Type.Integer({ minimum: 0 })),
  user: UserSummary,
});

export const login = defineRoute({
  id: "auth.login",
  method: "POST",
  path: "/auth/login",
  summary:
    "Log in with a user name and password, and the code of the second factor (otp) when the account has one; returns a JWT",
  tags: ["auth"],
  access: { public: true },
  body: LoginRequest,
  errors: [
    "invalid_credentials",
    "mfa_required",
    "invalid_otp",
    "account_locked",
    "service_account",
    "service_unavailable",
  ],
  responses: { 200: LoginResult },
});

export const logout = defineRoute({
  id: "auth.logout",
  method: "POST",
  path: "/auth/logout",
  summary: "Revoke the session of the presented token",
  tags: ["auth"],
  access: { roles: EVERYONE, duringFirstLogin: true, duringMfaEnrollment: true, scope: "any" },
  responses: { 204: null },
});

/**
 * What kind of credential the caller presented, so that a client can tell a script's API token
 * from a login (which `auth status` shows): for an API token also its id, name and scopes.
 */
export const PresentedCredential = Type.Object({
  type: Type.Union([Type.Literal("session"), Type.Literal("oauth"), Type.Literal("api-token")], {
    description: "a login's JWT (session), OAuth token credentials (oauth), or an API token (api-token)",
  }),
  id: Type.Optional(Type.String({ description: "the API token's id (api-token only)" })),
  name: Type.Optional(Type.String({ description: "the API token's name (api-token only)" })),
  scopes: Type.Optional(Type.Array(ApiTokenScopeName, { description: "the API token's scopes (api-token only)" })),
});

export const isLogged = defineRoute({
  id: "auth.isLogged",
  method: "GET",
  path: "/auth/isLogged",
  summary: "Validate the presented credential",
  tags: ["auth"],
  access: { roles: EVERYONE, duringFirstLogin: true, duringMfaEnrollment: true, scope: "any" },
  responses: {
    200: Type.Object({
      loggedIn: Type.Literal(true),
      user: UserSummary,
      expiresAt: Timestamp,
      credential: Type.Optional(PresentedCredential),
    }),
  },
});

const FirstLoginStatus = Type.Object({ employeeId: Type.String(), firstLogin: Type.Boolean() });

export const isFirstLogin = defineRoute({
  id: "auth.isFirstLogin",
  method: "GET",
  path: "/auth/isFirstLogin",
  summary: "Whether the caller must still change a temporary password",
  tags: ["auth"],
  access: { roles: EVERYONE, duringFirstLogin: true, scope: "any" },
  responses: { 200: FirstLoginStatus },
});

export const isFirstLoginOf = defineRoute({
  id: "auth.isFirstLoginOf",
  method: "GET",
  path: "/auth/isFirstLogin/:employeeId",
  summary: "Whether an employee must still change a temporary password (admin and support for others)",
  tags: ["auth"],
  access: { roles: EVERYONE, duringFirstLogin: true, scope: "resources:read" },
  params: Type.Object({ employeeId: Type.String({ maxLength: 128 }) }),
  errors: ["forbidden"],
  responses: { 200: FirstLoginStatus },
});

export const changePassword = defineRoute({
  id: "auth.changePassword",
  method: "POST",
  path: "/auth/ChangePassWithLastPass",
  summary: "Change the caller's password, proving the current one",
  tags: ["auth"],
  access: { roles: EVERYONE, duringFirstLogin: true, managesAccount: true },
  body: Type.Object(
    {
      lastPassword: Type.String({ minLength: 1, maxLength: 4096 }),
      newPassword: Type.String({ minLength: 1, maxLength: 4096 }),
    },
    { additionalProperties: false },
  ),
  errors: ["invalid_credentials", "account_locked", "weak_password"],
  responses: { 204: null },
});

export const renewPassword = defineRoute({
  id: "auth.renewPassword",
  method: "POST",
  path: "/renewPassword",
  aliases: ["/auth/renewPassword"],
  summary: "E-mail a single-use password reset link; the answer is the same whether or not the account exists",
  tags: ["auth"],
  access: { public: true },
  body: Type.Object(
    {
      userName: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
      email: Type.Optional(Type.String({ minLength: 3, maxLength: 320, format: "email" })),
    },
    { additionalProperties: false, description: "exactly one of userName or email" },
  ),
  errors: ["service_unavailable"],
  responses: { 202: Type.Object({ status: Type.Literal("accepted"), detail: Type.String() }) },
});

export const resetPassword = defineRoute({
  id: "auth.resetPassword",
  method: "PUT",
  path: "/resetPassword",
  aliases: ["/auth/resetPassword"],
  summary: "Set a new password with a reset token; every session of the user ends",
  tags: ["auth"],
  access: { public: true },
  body: Type.Object(
    {
      token: Type.String({ minLength: 1, maxLength: 512 }),
      newPassword: Type.String({ minLength: 1, maxLength: 4096 }),
    },
    { additionalProperties: false },
  ),
  errors: ["invalid_reset_token", "weak_password", "service_unavailable"],
  responses: { 204: null },
});

export const resetPasswordPage = defineRoute({
  id: "auth.resetPasswordPage",
  method: "GET",
  path: "/resetPassword",
  aliases: ["/auth/resetPassword"],
  summary: "The page a reset link opens: a form that sets the new password through PUT /resetPassword",
  tags: ["auth"],
  access: { public: true },
  query: Type.Object({
    token: Type.Optional(Type.String({ maxLength: 512 })),
    invitation: Type.Optional(Type.String({ maxLength: 8, description: "1: the words of an invitation" })),
  }),
  responses: { 200: null },
  content: { 200: { "text/html": Type.String({ description: "the page" }) } },
});

export const unlock = defineRoute({
  id: "auth.unlock",
  method: "POST",
  path: "/auth/unlock/:employeeId",
  summary: "Clear the failed-login backoff of an employee (admin and support)",
  tags: ["auth"],
  access: { roles: STAFF, managesAccount: true },
  params: Type.Object({ employeeId: Type.String({ maxLength: 128 }) }),
  responses: { 204: null },
});

export const authRoutes = [
  login,
  logout,
  isLogged,
  isFirstLogin,
  isFirstLoginOf,
  changePassword,
  renewPassword,
  resetPassword,
  resetPasswordPage,
  unlock,
] as const;
