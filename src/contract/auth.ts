import { Type } from "@sinclair/typebox";
import { Timestamp, UserSummary } from "./common.js";
import { defineRoute } from "./route.js";

const anyRole = ["admin", "support", "member"] as const;

export const Credentials = Type.Object(
  {
    userName: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ minLength: 1, maxLength: 4096 }),
  },
  { additionalProperties: false },
);

export const LoginResult = Type.Object({
  token: Type.String(),
  tokenType: Type.Literal("Bearer"),
  expiresAt: Timestamp,
  firstLogin: Type.Boolean(),
  user: UserSummary,
});

export const login = defineRoute({
  id: "auth.login",
  method: "POST",
  path: "/auth/login",
  summary: "Log in with a user name and password; returns a JWT",
  tags: ["auth"],
  access: { public: true },
  body: Credentials,
  responses: { 200: LoginResult },
});

export const logout = defineRoute({
  id: "auth.logout",
  method: "POST",
  path: "/auth/logout",
  summary: "Revoke the session of the presented token",
  tags: ["auth"],
  access: { roles: anyRole, duringFirstLogin: true },
  responses: { 204: null },
});

export const isLogged = defineRoute({
  id: "auth.isLogged",
  method: "GET",
  path: "/auth/isLogged",
  summary: "Validate the presented credential",
  tags: ["auth"],
  access: { roles: anyRole, duringFirstLogin: true },
  responses: {
    200: Type.Object({ loggedIn: Type.Literal(true), user: UserSummary, expiresAt: Timestamp }),
  },
});

const FirstLoginStatus = Type.Object({ employeeId: Type.String(), firstLogin: Type.Boolean() });

export const isFirstLogin = defineRoute({
  id: "auth.isFirstLogin",
  method: "GET",
  path: "/auth/isFirstLogin",
  summary: "Whether the caller must still change a temporary password",
  tags: ["auth"],
  access: { roles: anyRole, duringFirstLogin: true },
  responses: { 200: FirstLoginStatus },
});

export const isFirstLoginOf = defineRoute({
  id: "auth.isFirstLoginOf",
  method: "GET",
  path: "/auth/isFirstLogin/:employeeId",
  summary: "Whether an employee must still change a temporary password (admin and support for others)",
  tags: ["auth"],
  access: { roles: anyRole, duringFirstLogin: true },
  params: Type.Object({ employeeId: Type.String({ maxLength: 128 }) }),
  responses: { 200: FirstLoginStatus },
});

export const changePassword = defineRoute({
  id: "auth.changePassword",
  method: "POST",
  path: "/auth/ChangePassWithLastPass",
  summary: "Change the caller's password, proving the current one",
  tags: ["auth"],
  access: { roles: anyRole, duringFirstLogin: true },
  body: Type.Object(
    {
      lastPassword: Type.String({ minLength: 1, maxLength: 4096 }),
      newPassword: Type.String({ minLength: 1, maxLength: 4096 }),
    },
    { additionalProperties: false },
  ),
  responses: { 204: null },
});

export const authRoutes = [login, logout, isLogged, isFirstLogin, isFirstLoginOf, changePassword] as const;
