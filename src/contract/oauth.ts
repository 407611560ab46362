import { Type } from "@sinclair/typebox";
import { Timestamp, UserSummary } from "./common.js";
import { defineRoute, EVERYONE } from "./route.js";

/** The OAuth 1.0a endpoint (RFC 5849); `/oauth`, `/OAuth/` and every other spelling reach it too. */
export const OAUTH_PATH = "/oAuth";
export const OAUTH_TOKENS_PATH = "/oauth/tokens";

/**
 * Signature methods the provider verifies; PLAINTEXT only over HTTPS unless the server runs with a
 * dev flag; RSA-SHA1 for (and only for) consumers registered with a public key.
 */
export const OAUTH_SIGNATURE_METHODS = ["HMAC-SHA1", "HMAC-SHA256", "PLAINTEXT", "RSA-SHA1"] as const;
export type OAuthSignatureMethod = (typeof OAUTH_SIGNATURE_METHODS)[number];

/** The callback value of a client that cannot receive a redirect: the verifier is shown instead. */
export const OUT_OF_BAND = "oob";

/** Seconds a signed request's `oauth_timestamp` may differ from the server's clock. */
export const OAUTH_TIMESTAMP_WINDOW_SECONDS = 300;
/** Lifetime of temporary credentials and of their verifier. */
export const OAUTH_TEMPORARY_TTL_SECONDS = 600;
/** Lifetime of token credentials (they also end with logout, a password change, or when revoked). */
export const OAUTH_TOKEN_TTL_SECONDS = 90 * 24 * 3600;

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 2048, description }));

/**
 * The protocol parameters, when sent in the query string (they may equally come in the
 * `Authorization: OAuth` header or a form body). Other parameters are allowed and signed.
 */
const OAuthQuery = Type.Object(
  {
    oauth_consumer_key: Param("the consumer key"),
    oauth_token: Param("temporary or token credentials identifier"),
    oauth_signature_method: Param("HMAC-SHA1, HMAC-SHA256, PLAINTEXT or RSA-SHA1"),
    oauth_signature: Param("the signature (RFC 5849 section 3.4)"),
    oauth_timestamp: Param("seconds since the epoch"),
    oauth_nonce: Param("unique per consumer, token and timestamp"),
    oauth_version: Param("1.0 when present"),
    oauth_callback: Param("absolute URL registered for the consumer, or oob"),
    oauth_verifier: Param("the verifier of an approved temporary token"),
  },
  { additionalProperties: true },
);

/** What a signed request with token credentials learns about its user. */
export const OAuthIdentity = Type.Object({ user: UserSummary, consumerKey: Type.String() });

/** The owner's approval of temporary credentials whose callback is `oob`. */
export const OAuthApproval = Type.Object({ oauth_token: Type.String(), oauth_verifier: Type.String() });

/** Temporary or token credentials, `application/x-www-form-urlencoded` (RFC 5849 sections 2.1 and 2.3). */
export const OAuthFormCredentials = Type.Object({
  oauth_token: Type.String(),
  oauth_token_secret: Type.String(),
  oauth_callback_confirmed: Type.Optional(Type.Literal("true", { description: "temporary credentials only" })),
});

const OAuthAnswer = Type.Union([OAuthIdentity, OAuthApproval]);

/** The authorization page: the form, the verifier of an oob client, or why it cannot go on. */
const Page = Type.String({ description: "the authorization page (HTML)" });

const endpoint = {
  path: OAUTH_PATH,
  tags: ["oauth"],
  access: { public: true },
  query: OAuthQuery,
  responses: { 200: OAuthAnswer, 302: null, 303: null },
  // the credentials are form-encoded; a browser gets the page, its refusals too (a used form 400,
  // a temporary password 403, too many sign-ins 429)
  content: {
    200: { "application/x-www-form-urlencoded": OAuthFormCredentials, "text/html": Page },
    400: { "text/html": Page },
    403: { "text/html": Page },
    429: { "text/html": Page },
  },
  errors: [
    "token_missing",
    "token_invalid",
    "token_expired",
    "token_revoked",
    "password_change_required",
    "mfa_enrollment_required",
    "oauth_parameter_absent",
    "oauth_callback_rejected",
    "oauth_signature_invalid",
    "oauth_nonce_reused",
    "oauth_timestamp_refused",
    "oauth_token_invalid",
    "oauth_verifier_invalid",
    "service_unavailable",
  ],
} as const;

const DISPATCH =
  "Dispatched by what the request carries: consumer signature + oauth_callback → temporary credentials; " +
  "oauth_token + Bearer JWT of the owner, unsigned → approval (302 to the callback, or 200 JSON for oob); " +
  "consumer + temporary token signature + oauth_verifier → token credentials; " +
  "consumer + token signature → the identity of the approving user. " +
  "A browser's unsigned GET with oauth_token and Accept: text/html gets the authorization page (HTML: sign in, " +
  "approve or deny); its form posts back here and answers 303 to the callback (oauth_token and oauth_verifier, " +
  "or oauth_problem=permission_denied), or a page (the oob verifier; 400 for an unknown, expired or used token).";

export const endpointGet = defineRoute({
  ...endpoint,
  id: "oauth.get",
  method: "GET",
  summary: `OAuth 1.0a provider (RFC 5849). ${DISPATCH}`,
});

export const endpointPost = defineRoute({
  ...endpoint,
  id: "oauth.post",
  method: "POST",
  summary: `OAuth 1.0a provider (RFC 5849); parameters may also come in a form body. ${DISPATCH}`,
  requestContent: {
    "application/x-www-form-urlencoded": Type.Record(Type.String(), Type.String(), {
      description: "the protocol parameters and any others, signed (or the authorization page's form)",
    }),
  },
});

export const OAuthTokenInfo = Type.Object({
  token: Type.String({ description: "the token identifier (not a secret on its own)" }),
  userId: Type.String(),
  userName: Type.String(),
  consumerId: Type.String(),
  consumerKey: Type.String(),
  consumerName: Type.Optional(Type.String()),
  createdAt: Timestamp,
  lastUsedAt: Type.Optional(
    Type.String({ format: "date-time", description: "the last signed request with them, to the minute" }),
  ),
  expiresAt: Timestamp,
});

export const listTokens = defineRoute({
  id: "oauth.tokens.list",
  method: "GET",
  path: OAUTH_TOKENS_PATH,
  summary:
    "Connected applications: the live OAuth grants (token credentials) of the caller; an admin sees every user's, or one user's with userId",
  tags: ["oauth"],
  access: { roles: EVERYONE, managesAccount: true },
  errors: ["forbidden"],
  query: Type.Object(
    {
      userId: Type.Optional(
        Type.String({ maxLength: 256, description: "only this user's grants (another user's: admin only)" }),
      ),
    },
    { additionalProperties: false },
  ),
  responses: { 200: Type.Object({ data: Type.Array(OAuthTokenInfo), total: Type.Integer() }) },
});

export const revokeToken = defineRoute({
  id: "oauth.tokens.revoke",
  method: "DELETE",
  path: `${OAUTH_TOKENS_PATH}/:token`,
  summary: "Revoke an OAuth grant: the caller's own (another user's answers 404), or anyone's (admin)",
  tags: ["oauth"],
  access: { roles: EVERYONE, managesAccount: true },
  params: Type.Object({ token: Type.String({ maxLength: 256 }) }),
  responses: { 204: null },
});

export const oauthRoutes = [endpointGet, endpointPost, listTokens, revokeToken] as const;
