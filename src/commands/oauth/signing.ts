/**
 * What the OAuth verbs sign with and how: the secrets they read, the signature method and the RSA
 * key, the stored token credentials, and the signer of the `Authorization: OAuth` header.
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Context } from "../../cli/command-context.js";
import { AuthError, UsageError } from "../../cli/errors.js";
import { readPassword } from "../../cli/passwords.js";
import type { StoredOAuth } from "../../config/profiles.js";

export type HmacMethod = "HMAC-SHA1" | "HMAC-SHA256";
/** What the signing commands sign with: an HMAC over the shared secrets, or RSA-SHA1 with the consumer's private key. */
export type SignatureMethod = HmacMethod | "RSA-SHA1";
export const SIGNATURE_METHODS: readonly SignatureMethod[] = ["HMAC-SHA1", "HMAC-SHA256", "RSA-SHA1"];

export interface KeyPair {
  key: string;
  secret: string;
}

/** A secret this command reads: from stdin when its flag is given, else the environment, else a hidden prompt. */
export interface SecretSpec {
  /** what it is, for the prompt and the error */
  label: string;
  /** `--consumer-secret-stdin` and the like */
  flag: string;
  fromStdin?: boolean;
  env: string;
}

/**
 * Reads several secrets in prompt order. Those whose `--…-stdin` flag is given take the lines of
 * stdin one after the other, in that same order (spec section 3: several secrets, one per line).
 */
export async function readSecrets(ctx: Context, specs: SecretSpec[]): Promise<string[]> {
  let line = 0;
  const values: string[] = [];
  for (const spec of specs) {
    const value = await readPassword(ctx.io, {
      stdin: spec.fromStdin,
      index: spec.fromStdin ? line++ : 0,
      env: spec.env,
      prompt: spec.label,
      canPrompt: ctx.canPrompt(),
    });
    if (!value) {
      throw new UsageError(
        `The ${spec.label.toLowerCase()} is required and there is no terminal to ask on.`,
        `pass ${spec.flag} (one line of stdin per secret, in the order: ${specs.map((s) => s.label.toLowerCase()).join(", ")}) or set ${spec.env}`,
      );
    }
    values.push(value);
  }
  return values;
}

export const CONSUMER_SECRET: Omit<SecretSpec, "fromStdin"> = {
  label: "Consumer secret",
  flag: "--consumer-secret-stdin",
  env: "BIZCTL_OAUTH_CONSUMER_SECRET",
};

export const TOKEN_SECRET: Omit<SecretSpec, "fromStdin"> = {
  label: "Token secret",
  flag: "--token-secret-stdin",
  env: "BIZCTL_OAUTH_TOKEN_SECRET",
};

export function signatureMethodOf(value: string | undefined): SignatureMethod {
  const method = (value ?? "HMAC-SHA1").toUpperCase();
  if (!(SIGNATURE_METHODS as readonly string[]).includes(method)) {
    throw new UsageError(`--signature-method is ${SIGNATURE_METHODS.join(", ")}, not '${value}'.`);
  }
  return method as SignatureMethod;
}

/** The consumer's RSA private key for RSA-SHA1 (`--private-key-file`); undefined for the HMAC methods. */
export async function privateKeyOf(
  method: SignatureMethod,
  file: string | undefined,
): Promise<{ pem: string; file: string } | undefined> {
  if (method !== "RSA-SHA1") {
    if (file) throw new UsageError("--private-key-file signs with RSA-SHA1 only; add --signature-method RSA-SHA1.");
    return undefined;
  }
  if (!file) {
    throw new UsageError("RSA-SHA1 signs with the consumer's private key.", "pass --private-key-file FILE (PEM)");
  }
  const path = resolve(file);
  const pem = await readFile(path, "utf8").catch((error: Error) => {
    throw new UsageError(`Cannot read the private key ${file}: ${error.message}`);
  });
  // node:crypto is loaded by the commands that sign, not at every start
  const { createPrivateKey } = await import("node:crypto");
  try {
    const key = createPrivateKey(pem);
    if (key.asymmetricKeyType !== "rsa") throw new Error(`a ${key.asymmetricKeyType} key`);
  } catch (error) {
    throw new UsageError(`${file} is not a PEM RSA private key (${(error as Error).message}).`);
  }
  return { pem, file: path };
}

/**
 * The absolute URL the server will check signatures against. The embedded server is reached
 * through inject(), which presents itself as `http://localhost`; a remote one at the profile's URL.
 */
export function signingBase(ctx: Context): string {
  return ctx.isEmbedded ? "http://localhost" : ctx.target.server.replace(/\/+$/, "");
}

/**
 * A maker of the `Authorization: OAuth ...` header of a request, signed with the oauth-1.0a
 * package: each call signs afresh (a new nonce and timestamp), so that every attempt of a retried
 * request is a request the server has not seen. The query of `path` is decoded here (`+` as a
 * space, repeated names kept) and handed to the signer as data, so that it signs the values the
 * server reads. A JSON body is never signed (RFC 5849 signs form bodies only).
 */
export async function oauthSigner(
  ctx: Context,
  input: {
    consumer: KeyPair;
    token?: KeyPair;
    method: string;
    path: string;
    /** further protocol parameters: oauth_callback, oauth_verifier */
    protocol?: Record<string, string>;
    signatureMethod?: SignatureMethod;
    /** RSA-SHA1: the consumer's PEM private key */
    privateKey?: string;
  },
): Promise<() => string> {
  const [imported, { createHmac, createSign }] = await Promise.all([import("oauth-1.0a"), import("node:crypto")]);
  const OAuth = ((imported as { default?: unknown }).default ?? imported) as typeof imported.default;
  const algorithm = input.signatureMethod === "HMAC-SHA256" ? "sha256" : "sha1";
  const privateKey = input.privateKey;
  const signer = new OAuth({
    consumer: { key: input.consumer.key, secret: input.consumer.secret },
    signature_method: input.signatureMethod ?? "HMAC-SHA1",
    // RSA-SHA1 (section 3.4.3) signs the base string with the private key; the secrets play no part
    hash_function: privateKey
      ? (base) => createSign("RSA-SHA1").update(base).sign(privateKey, "base64")
      : (base, key) => createHmac(algorithm, key).update(base).digest("base64"),
  });
  const [pathname, query = ""] = input.path.split("?", 2) as [string, string?];
  const data: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    // own members only: a parameter named `constructor` is one more parameter
    const previous = Object.hasOwn(data, name) ? data[name] : undefined;
    data[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  Object.assign(data, input.protocol);
  const request = { method: input.method.toUpperCase(), url: `${signingBase(ctx)}${pathname}`, data };
  // authorize() adds the oauth_* parameters to the data it is given: a copy each time
  return () => signer.toHeader(signer.authorize({ ...request, data: { ...data } }, input.token)).Authorization;
}

/** The token credentials stored in the profile; a one-off `--server` never gets them. */
export function storedOAuth(ctx: Context): StoredOAuth {
  const profile = ctx.profile;
  if (ctx.serverOverride) {
    throw new AuthError(
      "The stored OAuth credentials belong to the profile's server, not to --server.",
      "run 'bizctl oauth flow' against that server with a profile of its own",
    );
  }
  if (!profile.oauth) {
    throw new AuthError(
      `No OAuth token credentials in profile '${ctx.profileName}'.`,
      "run 'bizctl oauth flow --consumer-key KEY' (or request-token, authorize, access-token)",
    );
  }
  return profile.oauth;
}

/** How the stored token credentials sign: the flags, else what was stored with them. */
export async function storedSigning(
  stored: StoredOAuth,
  flags: { signatureMethod?: string; privateKeyFile?: string },
): Promise<{ signatureMethod: SignatureMethod; privateKey?: string }> {
  const signatureMethod = signatureMethodOf(flags.signatureMethod ?? stored.signatureMethod);
  const key = await privateKeyOf(
    signatureMethod,
    flags.privateKeyFile ?? (signatureMethod === "RSA-SHA1" ? stored.privateKeyFile : undefined),
  );
  return { signatureMethod, ...(key && { privateKey: key.pem }) };
}

/** The options every signing command takes. */
export const SIGNING_OPTIONS = {
  method: ["--signature-method <method>", "HMAC-SHA1 (default), HMAC-SHA256, or RSA-SHA1 with --private-key-file"],
  key: ["--private-key-file <file>", "RSA-SHA1: the consumer's PEM RSA private key"],
} as const;
