/**
 * The HTML of the browser authorization page (RFC 5849 section 2.2), under the rules of the
 * reset page: self-contained, a style under a per-response nonce, no script at all, and a form
 * that may be sent only to this server (and, since Chromium applies form-action to the redirect
 * that follows, to the consumer's callback origin).
 */
import { OUT_OF_BAND } from "../../contract/oauth.js";
import { escapeHtml } from "../escape-html.js";
import type { AuthorizeView } from "../services/oauth-authorization-page.js";
import { pageDocument, pageNonce, pagePolicy } from "./page-skeleton.js";

const STYLE = `
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 30rem; margin: 3rem auto; padding: 0 1rem; color: #1b1f24; }
  h1 { font-size: 1.4rem; }
  .app { padding: .75rem 1rem; border: 1px solid #d0d7de; border-radius: 6px; background: #f6f8fa; }
  .app strong { font-size: 1.1rem; }
  label { display: block; margin-top: 1rem; font-weight: 600; }
  input { width: 100%; box-sizing: border-box; padding: .5rem; font: inherit; border: 1px solid #8c959f; border-radius: 4px; }
  .buttons { display: flex; gap: .75rem; margin-top: 1.25rem; }
  button { padding: .55rem 1.2rem; font: inherit; border-radius: 4px; cursor: pointer; }
  button[value=approve] { border: 0; background: #0b57d0; color: #fff; }
  button[value=deny] { border: 1px solid #8c959f; background: #fff; color: #1b1f24; }
  .error { margin-top: 1rem; padding: .75rem; border-radius: 4px; background: #ffebe9; border: 1px solid #cf222e; }
  .verifier { font: 2rem/1.2 ui-monospace, monospace; letter-spacing: .15em; padding: 1rem; text-align: center; border: 2px dashed #0b57d0; border-radius: 6px; user-select: all; }
  p.hint { color: #57606a; font-size: .9rem; }
`;

function body(view: AuthorizeView): { title: string; main: string } {
  switch (view.kind) {
    case "form": {
      const app = escapeHtml(view.consumerName);
      const destination = view.callbackHost
        ? `Approving sends you back to <strong>${escapeHtml(view.callbackHost)}</strong>.`
        : "Approving shows you a code to type into the application.";
      const error = view.error ? `<p class="error" role="alert" id="error">${escapeHtml(view.error)}</p>` : "";
      return {
        title: `Authorize ${view.consumerName}`,
        main: `<h1>Authorize an application</h1>
<div class="app"><strong>${app}</strong> asks to act as you on this API until you revoke it.</div>
<p class="hint">${destination} You can take this access back at any time: your administrator can revoke it for you.</p>
${error}
<form method="post" action="${escapeHtml(view.action)}">
  <input type="hidden" name="oauth_token" value="${escapeHtml(view.token)}">
  <input type="hidden" name="csrf_token" value="${escapeHtml(view.formToken)}">
  <label for="userName">User name</label>
  <input id="userName" name="userName" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(view.userName ?? "")}"${view.userName ? "" : " autofocus"}>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required${view.userName ? " autofocus" : ""}>
  <div class="buttons">
    <button type="submit" name="decision" value="approve">Sign in and approve</button>
    <button type="submit" name="decision" value="deny" formnovalidate>Deny</button>
  </div>
</form>`,
      };
    }
    case "verifier":
      return {
        title: "Your verification code",
        main: `<h1>Access approved</h1>
<p>Type this code into <strong>${escapeHtml(view.consumerName)}</strong>:</p>
<p class="verifier" id="verifier">${escapeHtml(view.verifier)}</p>
<p class="hint">It works once, within 10 minutes. Upper or lower case, with or without the dash.</p>`,
      };
    case "denied":
      return {
        title: "Access denied",
        main: `<h1>Access denied</h1>
<p><strong>${escapeHtml(view.consumerName)}</strong> was not given access. You can close this page.</p>`,
      };
    case "message":
      return {
        title: view.title,
        main: `<h1>${escapeHtml(view.title)}</h1>
<p class="error" role="alert" id="error">${escapeHtml(view.text)}</p>
${view.restart ? `<p><a href="${escapeHtml(view.restart)}">Start again</a></p>` : ""}`,
      };
  }
}

/** The origin a redirect to the callback goes to, as a CSP source (a custom scheme has no origin). */
function callbackSource(callback: string | undefined): string[] {
  if (callback === undefined || callback === OUT_OF_BAND) return [];
  const url = new URL(callback);
  return [url.origin === "null" ? url.protocol : url.origin];
}

/** The page and its Content-Security-Policy; a form may also go to the origin of `callback`, where approving redirects. */
export function authorizePage(view: AuthorizeView, callback?: string): { html: string; csp: string } {
  const nonce = pageNonce();
  const formAction = callbackSource(callback);
  const csp = pagePolicy(nonce, view.kind === "form" ? { formAction: ["'self'", ...formAction] } : {});
  const { title, main } = body(view);
  const html = pageDocument({ nonce, title, style: STYLE, body: `<main>\n${main}\n</main>` });
  return { html, csp };
}
