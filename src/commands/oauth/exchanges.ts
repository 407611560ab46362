/** The exchanges of the OAuth verbs with the /oAuth endpoint: temporary and token credentials, approval, identity. */
import type { Context } from "../../cli/command-context.js";
import type { StoredOAuth } from "../../config/profiles.js";
import * as oauth from "../../contract/oauth.js";
import { type KeyPair, oauthSigner, type SignatureMethod } from "./signing.js";

export function parseForm(body: unknown): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(typeof body === "string" ? body : ""));
}

/** POST /oAuth signed with the consumer (and temporary) credentials; the form-encoded answer, parsed. */
export async function signedExchange(
  ctx: Context,
  input: {
    consumer: KeyPair;
    token?: KeyPair;
    protocol: Record<string, string>;
    signatureMethod?: SignatureMethod;
    privateKey?: string;
  },
): Promise<Record<string, string>> {
  const client = await ctx.client();
  const authorize = await oauthSigner(ctx, { ...input, method: "POST", path: oauth.OAUTH_PATH });
  const { data } = await client.call(oauth.endpointPost, { authorize });
  return parseForm(data);
}

export interface Approval {
  oauth_token: string;
  oauth_verifier: string;
  /** where the provider sends the owner when the callback is not oob */
  callback?: string;
}

/** GET /oAuth?oauth_token=… as the logged-in user (Bearer): approves and returns the verifier. */
export async function approveTemporary(ctx: Context, token: string): Promise<Approval> {
  ctx.requireCredential();
  const client = await ctx.client();
  const result = await client.call(oauth.endpointGet, { query: { oauth_token: token } });
  const location = result.headers.location;
  if (result.status === 302 && location) {
    const url = new URL(location);
    return {
      oauth_token: url.searchParams.get("oauth_token") ?? token,
      oauth_verifier: url.searchParams.get("oauth_verifier") ?? "",
      callback: location,
    };
  }
  const data = result.data as { oauth_token?: string; oauth_verifier?: string };
  if (!data?.oauth_verifier) throw new Error("The server approved but sent no verifier.");
  return { oauth_token: data.oauth_token ?? token, oauth_verifier: data.oauth_verifier };
}

export interface Identity {
  user: { id: string; userName: string; displayName?: string; roles: string[] };
  consumerKey: string;
}

/** The signed identity call: who the token credentials act as. */
export async function identity(
  ctx: Context,
  credentials: { consumer: KeyPair; token: KeyPair; signatureMethod?: SignatureMethod; privateKey?: string },
): Promise<Identity> {
  const client = await ctx.client();
  const authorize = await oauthSigner(ctx, { ...credentials, method: "GET", path: oauth.OAUTH_PATH });
  const { data } = await client.call(oauth.endpointGet, { authorize });
  return data as Identity;
}

/** Exchanges approved temporary credentials and keeps the token credentials in the profile. */
export async function exchangeAndStore(
  ctx: Context,
  input: {
    consumer: KeyPair;
    temporary: KeyPair;
    verifier: string;
    signatureMethod?: SignatureMethod;
    privateKey?: { pem: string; file: string };
  },
) {
  const signing = { signatureMethod: input.signatureMethod, privateKey: input.privateKey?.pem };
  const answer = await signedExchange(ctx, {
    consumer: input.consumer,
    token: input.temporary,
    protocol: { oauth_verifier: input.verifier },
    ...signing,
  });
  if (!answer.oauth_token || !answer.oauth_token_secret) throw new Error("The server sent no token credentials.");
  const token = { key: answer.oauth_token, secret: answer.oauth_token_secret };
  const who = await identity(ctx, { consumer: input.consumer, token, ...signing });
  const stored: StoredOAuth = {
    consumerKey: input.consumer.key,
    consumerSecret: input.consumer.secret,
    token: token.key,
    tokenSecret: token.secret,
    user: { id: who.user.id, userName: who.user.userName, roles: who.user.roles },
    obtainedAt: new Date().toISOString(),
    ...(input.signatureMethod && input.signatureMethod !== "HMAC-SHA1" && { signatureMethod: input.signatureMethod }),
    ...(input.privateKey && { privateKeyFile: input.privateKey.file }),
  };
  const profile = ctx.profile;
  await ctx.profiles.save(ctx.profileName, {
    ...profile,
    oauth: stored,
  });
  ctx.info(
    `Token credentials for ${who.user.userName} via consumer ${input.consumer.key} stored in profile '${ctx.profileName}'.`,
  );
  return {
    profile: ctx.profileName,
    server: (await ctx.client()).transport.description,
    consumerKey: input.consumer.key,
    token: token.key,
    user: who.user.userName,
    userId: who.user.id,
    roles: who.user.roles,
  };
}
