/**
 * The resource-owner authorization of RFC 5849 section 2.2 for a browser: the page a partner's
 * web application sends its user to, and the form it posts back. The user signs in and decides
 * in one step, as on the classic OAuth 1.0a providers: the API keeps no browser session (no
 * cookie), so every authorization begins with the password. Each form carries a single-use token
 * bound to the temporary credentials; the password check is the one of /auth/login, with its
 * back-off and its per-client budget. What the page shows is a view; pages/authorize-page.ts
 * renders it.
 */
import { createHash } from "node:crypto";
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { firstFormValues } from "../oauth1/request.js";
import { ProblemError } from "../problem-error.js";
import * as pages from "../store/oauth-page-repo.js";
import { checkPasswordAndRecord, mustEnroll } from "./accounts.js";
import { audit } from "./audit.js";
import { approveFor } from "./oauth-credentials.js";
import { randomToken } from "./random-token.js";
import type { RequestOrigin, ServiceContext } from "./service-context.js";

export type AuthorizeView =
  | {
      kind: "form";
      /** the relative URL the form posts to (this endpoint, as the browser reached it) */
      action: string;
      token: string;
      formToken: string;
      consumerName: string;
      /** where approving sends the browser: a host, or undefined for oob */
      callbackHost?: string;
      userName?: string;
      /** what went wrong with the last submission */
      error?: string;
    }
  | { kind: "verifier"; consumerName: string; verifier: string }
  | { kind: "denied"; consumerName: string }
  | { kind: "message"; title: string; text: string; restart?: string };

export interface PageShown {
  kind: "page";
  status: number;
  view: AuthorizeView;
  /** the callback a form's approval redirects to (the page lets the form go there) */
  callback?: string;
  /** headers the answer carries besides the page's own (a lock's Retry-After) */
  headers?: Record<string, string>;
}

export type PageAnswer = PageShown | { kind: "redirect"; status: 303; location: string };

/** What the page reads of the browser's request: its target (path and query), its form, where it came from. */
export interface PageVisit {
  url: string;
  form?: string;
  origin: RequestOrigin;
}

/**
 * Spends one attempt of the client's /auth/login budget, as a password typed here is a login
 * attempt: undefined when there was one left, else the Retry-After of the refusal.
 */
export type LoginBudget = () => Promise<{ retryAfter: string | number | string[] | undefined } | undefined>;

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The form posts to this endpoint as the browser reached it, relatively (a proxy's prefix survives). */
function formAction(visit: PageVisit): string {
  const path = visit.url.split("?")[0]!;
  return path.endsWith("/") ? "./" : path.slice(path.lastIndexOf("/") + 1);
}

function page(status: number, view: AuthorizeView, callback?: string): PageShown {
  return { kind: "page", status, view, ...(callback !== undefined && { callback }) };
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
  visit: PageVisit,
  temporary: pages.PageTemporary,
  status = 200,
  extra: { userName?: string; error?: string } = {},
): Promise<PageShown> {
  const formToken = randomToken(32);
  await pages.insertPageForm(ctx.store.db, {
    token_hash: sha256(formToken),
    temporary_token: temporary.token,
    expires_at: temporary.expiresAt,
  });
  const view: AuthorizeView = {
    kind: "form",
    action: formAction(visit),
    token: temporary.token,
    formToken,
    consumerName: nameOf(temporary),
    ...(temporary.callback !== OUT_OF_BAND && { callbackHost: new URL(temporary.callback).host || temporary.callback }),
    ...extra,
  };
  return page(status, view, temporary.callback);
}

/** GET: the consent and sign-in form, or a page saying the link is dead (400, never a redirect). */
export async function showPage(ctx: ServiceContext, visit: PageVisit): Promise<PageAnswer> {
  const token = firstFormValues(visit.url.slice(visit.url.indexOf("?") + 1))?.get("oauth_token") ?? "";
  const temporary = await pages.findPageTemporary(ctx.store.db, token);
  if (!usable(temporary, ctx.clock())) return DEAD();
  return formPage(ctx, visit, temporary);
}

/** POST: the form back, its token spent; then deny, or sign in and approve. */
export async function submitPage(ctx: ServiceContext, visit: PageVisit, loginBudget: LoginBudget): Promise<PageAnswer> {
  const form = firstFormValues(visit.form ?? "") ?? new Map<string, string>();
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
      restart: `${formAction(visit)}?oauth_token=${encodeURIComponent(token)}`,
    });
  }
  const decision = form.get("decision");
  if (decision === "deny") return deny(ctx, temporary, visit.origin);
  if (decision !== "approve") {
    return formPage(ctx, visit, temporary, 400, { error: "Choose Approve or Deny." });
  }
  const userName = form.get("userName") ?? "";
  const refused = await loginBudget();
  if (refused) {
    return formPage(ctx, visit, temporary, 429, {
      userName,
      error: `Too many sign-in attempts from this address; try again in ${refused.retryAfter ?? "a few"} seconds.`,
    });
  }
  let account: Awaited<ReturnType<typeof checkPasswordAndRecord>>;
  try {
    account = await checkPasswordAndRecord(ctx, userName, form.get("password") ?? "", visit.origin, "oauth page");
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    if (error.code === "account_locked") {
      const answer = await formPage(ctx, visit, temporary, 429, { userName, error: error.detail });
      return { ...answer, headers: error.extra.headers ?? {} };
    }
    if (error.code === "mfa_required") {
      return formPage(ctx, visit, temporary, 200, {
        userName,
        error:
          "Your account is protected by a second factor, which this page cannot ask for, so it cannot approve the application here. Ask your administrator for another way to connect it; nothing was approved.",
      });
    }
    if (error.code !== "invalid_credentials") throw error;
    return formPage(ctx, visit, temporary, 200, { userName, error: "The user name or password is wrong." });
  }
  const owner = {
    userId: account.id,
    userName: account.userName,
    firstLogin: account.credential.firstLogin,
    // the password check let through only an account without a factor
    mfaEnrollmentRequired: mustEnroll(ctx, account.roles),
  };
  try {
    const approval = await approveFor(ctx, owner, token, visit.origin);
    if (approval.redirect) return { kind: "redirect", status: 303, location: approval.redirect };
    return page(200, { kind: "verifier", consumerName: nameOf(temporary), verifier: approval.verifier });
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    // approved or spent meanwhile, from another tab or by the CLI
    if (error.code === "oauth_token_invalid") return DEAD();
    const refused = NOT_YET[error.code];
    if (!refused) throw error;
    return page(403, {
      kind: "message",
      ...refused,
      restart: `${formAction(visit)}?oauth_token=${encodeURIComponent(token)}`,
    });
  }
}

/** What an owner who may not approve yet reads, and does first (the reader may never have seen a command line). */
const NOT_YET: Record<string, { title: string; text: string }> = {
  password_change_required: {
    title: "Change your password first",
    text: "Your password is temporary and must be changed before you can approve an application. Ask your administrator how to change it, then come back to this page from the application; nothing was approved.",
  },
  mfa_enrollment_required: {
    title: "Set up a second factor first",
    text: "This service requires a second factor (an authenticator app) of accounts like yours, and yours has none yet, so it cannot approve an application. Set one up for your account first (ask your administrator how), then come back to this page from the application; nothing was approved.",
  },
};

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
