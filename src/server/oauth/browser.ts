/**
 * The resource-owner authorization of RFC 5849 section 2.2 for a browser: the page a partner's
 * web application sends its user to, and the form it posts back. The user signs in and decides
 * in one step, as on the classic OAuth 1.0a providers: the API keeps no browser session (no
 * cookie), so every authorization begins with the password. Each form carries a single-use token
 * bound to the temporary credentials; the password check is the one of /auth/login, with its
 * back-off and its per-client budget.
 */
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { originOf } from "../http/origin.js";
import { ProblemError } from "../problems.js";
import { checkPasswordAndRecord } from "../services/accounts.js";
import { audit } from "../services/audit.js";
import type { RequestOrigin, ServiceContext } from "../services/context.js";
import { randomToken } from "../services/random-token.js";
import * as pages from "../store/oauth-page-repo.js";
import { type AuthorizeView, authorizePage } from "./authorize-page.js";
import { approveFor } from "./provider.js";
import { FORM_MEDIA_TYPE } from "./request.js";
import { OAuthSyntaxError, parseForm } from "./signature.js";

export type PageAnswer =
  | { kind: "page"; status: number; html: string; csp: string }
  | { kind: "redirect"; status: 303; location: string };

/** The per-client login limiter of /auth/login (an async onRequest hook that throws a 429 error). */
export type LoginLimit = onRequestHookHandler;

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function firstValues(text: string): Map<string, string> | undefined {
  try {
    const values = new Map<string, string>();
    for (const [name, value] of parseForm(text)) if (!values.has(name)) values.set(name, value);
    return values;
  } catch (error) {
    if (error instanceof OAuthSyntaxError) return undefined;
    throw error;
  }
}

/**
 * Which part of the page this request is, if any: a browser's unsigned GET with a temporary
 * token that asks for HTML ("show"), or the page's own form coming back ("submit"). Anything
 * signed or carrying an Authorization header stays with the protocol endpoint.
 */
export function pageRequest(request: FastifyRequest): "show" | "submit" | undefined {
  if (request.headers.authorization) return undefined;
  if (request.method === "GET") {
    if (!/\btext\/html\b/i.test(String(request.headers.accept ?? ""))) return undefined;
    const query = firstValues(request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1) : "");
    return query?.get("oauth_token") && !query.has("oauth_signature") ? "show" : undefined;
  }
  const type = String(request.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  if (request.method !== "POST" || type !== FORM_MEDIA_TYPE || typeof request.body !== "string") return undefined;
  const form = firstValues(request.body);
  return form?.has("csrf_token") && !form.has("oauth_signature") ? "submit" : undefined;
}

/** The form posts to this endpoint as the browser reached it, relatively (a proxy's prefix survives). */
function formAction(request: FastifyRequest): string {
  const path = request.url.split("?")[0]!;
  return path.endsWith("/") ? "./" : path.slice(path.lastIndexOf("/") + 1);
}

/** The origin a redirect to the callback goes to, as a CSP source (a custom scheme has no origin). */
function callbackSource(callback: string): string[] {
  if (callback === OUT_OF_BAND) return [];
  const url = new URL(callback);
  return [url.origin === "null" ? url.protocol : url.origin];
}

function page(status: number, view: AuthorizeView, callback?: string): PageAnswer {
  return { kind: "page", status, ...authorizePage(view, callback ? callbackSource(callback) : []) };
}

const DEAD = page.bind(undefined, 400, {
  kind: "message",
  title: "This authorization link cannot be used",
  text: "It is unknown, has expired or was already used. Go back to the application and start again from there.",
});

function usable(temporary: pages.PageTemporary | undefined, now: Date): temporary is pages.PageTemporary {
  return !!temporary && !temporary.settled && Date.parse(temporary.expiresAt) > now.getTime();
}

const nameOf = (temporary: pages.PageTemporary) => temporary.consumerName ?? "An application";

/** A fresh form (with a new single-use token) for these temporary credentials. */
async function formPage(
  ctx: ServiceContext,
  request: FastifyRequest,
  temporary: pages.PageTemporary,
  status = 200,
  extra: { userName?: string; error?: string } = {},
): Promise<PageAnswer> {
  const formToken = randomToken(32);
  await pages.insertPageForm(ctx.store.db, {
    token_hash: sha256(formToken),
    temporary_token: temporary.token,
    expires_at: temporary.expiresAt,
  });
  const view: AuthorizeView = {
    kind: "form",
    action: formAction(request),
    token: temporary.token,
    formToken,
    consumerName: nameOf(temporary),
    ...(temporary.callback !== OUT_OF_BAND && { callbackHost: new URL(temporary.callback).host || temporary.callback }),
    ...extra,
  };
  return page(status, view, temporary.callback);
}

/** GET: the consent and sign-in form, or a page saying the link is dead (400, never a redirect). */
export async function showPage(ctx: ServiceContext, request: FastifyRequest): Promise<PageAnswer> {
  const token = firstValues(request.url.slice(request.url.indexOf("?") + 1))?.get("oauth_token") ?? "";
  const temporary = await pages.findPageTemporary(ctx.store.db, token);
  if (!usable(temporary, ctx.clock())) return DEAD();
  return formPage(ctx, request, temporary);
}

/** POST: the form back, its token spent; then deny, or sign in and approve. */
export async function submitPage(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  loginLimit: LoginLimit,
): Promise<PageAnswer> {
  const form = firstValues(request.body as string) ?? new Map<string, string>();
  const token = form.get("oauth_token") ?? "";
  const temporary = await pages.findPageTemporary(ctx.store.db, token);
  const now = ctx.clock();
  if (!usable(temporary, now)) return DEAD();
  const spent = await pages.consumePageForm(ctx.store.db, {
    tokenHash: sha256(form.get("csrf_token") ?? ""),
    temporaryToken: token,
    nowIso: now.toISOString(),
  });
  if (!spent) {
    return page(400, {
      kind: "message",
      title: "This form cannot be sent again",
      text: "It was already sent, or it did not come from this page. Open the authorization page again to continue.",
      restart: `${formAction(request)}?oauth_token=${encodeURIComponent(token)}`,
    });
  }
  const decision = form.get("decision");
  if (decision === "deny") return deny(ctx, temporary, originOf(request));
  if (decision !== "approve") {
    return formPage(ctx, request, temporary, 400, { error: "Choose Approve or Deny." });
  }
  const userName = form.get("userName") ?? "";
  try {
    // the same per-client budget as /auth/login: a password typed here is a login attempt
    await loginLimit.call(request.server, request, reply, () => {});
  } catch (error) {
    if ((error as { statusCode?: unknown }).statusCode !== 429) throw error;
    const wait = reply.getHeader("retry-after");
    return formPage(ctx, request, temporary, 429, {
      userName,
      error: `Too many sign-in attempts from this address; try again in ${wait ?? "a few"} seconds.`,
    });
  }
  let account: Awaited<ReturnType<typeof checkPasswordAndRecord>>;
  try {
    account = await checkPasswordAndRecord(ctx, userName, form.get("password") ?? "", originOf(request), "oauth page");
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    if (error.code === "account_locked") {
      for (const [name, value] of Object.entries(error.extra.headers ?? {})) reply.header(name, value);
      return formPage(ctx, request, temporary, 429, { userName, error: error.detail });
    }
    if (error.code !== "invalid_credentials") throw error;
    return formPage(ctx, request, temporary, 200, { userName, error: "The user name or password is wrong." });
  }
  if (account.credential.firstLogin) {
    return page(403, {
      kind: "message",
      title: "Change your password first",
      text: "Your password is temporary. Change it (bizctl auth change-password), then open the authorization page again; nothing was approved.",
      restart: `${formAction(request)}?oauth_token=${encodeURIComponent(token)}`,
    });
  }
  try {
    const approval = await approveFor(
      ctx,
      { userId: account.id, userName: account.userName },
      token,
      originOf(request),
    );
    if (approval.redirect) return { kind: "redirect", status: 303, location: approval.redirect };
    return page(200, { kind: "verifier", consumerName: nameOf(temporary), verifier: approval.verifier });
  } catch (error) {
    // approved or spent meanwhile, from another tab or by the CLI
    if (error instanceof ProblemError && error.code === "oauth_token_invalid") return DEAD();
    throw error;
  }
}

/** The owner refuses: the temporary credentials are gone; the consumer learns it (Problem Reporting). */
async function deny(ctx: ServiceContext, temporary: pages.PageTemporary, origin: RequestOrigin): Promise<PageAnswer> {
  // nobody signs in to deny: the record names the consumer and where the answer came from
  const denied = await ctx.store.db.transaction().execute(async (trx) => {
    const done = await pages.denyTemporary(trx, temporary.token);
    if (done) {
      await audit(ctx, trx, {
        action: "oauth.grant.deny",
        target: {
          type: "OAuthConsumer",
          id: temporary.consumerId,
          ...(temporary.consumerName && { name: temporary.consumerName }),
        },
        origin,
      });
    }
    return done;
  });
  if (!denied) return DEAD();
  if (temporary.callback === OUT_OF_BAND) return page(200, { kind: "denied", consumerName: nameOf(temporary) });
  const location = new URL(temporary.callback);
  location.searchParams.append("oauth_token", temporary.token);
  location.searchParams.append("oauth_problem", "permission_denied");
  return { kind: "redirect", status: 303, location: location.toString() };
}
