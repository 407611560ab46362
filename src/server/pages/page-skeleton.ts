import { randomBytes } from "node:crypto";
import { escapeHtml } from "../escape-html.js";

/**
 * The rules of the pages the server serves to browsers (the reset page, the OAuth authorization
 * page): no external assets, everything inline under a per-response nonce, so that the
 * Content-Security-Policy forbids everything else, framing included.
 */
export function pageNonce(): string {
  return randomBytes(16).toString("base64");
}

export interface PageAllowances {
  /** the page runs its inline script (under the nonce) */
  script?: boolean;
  /** the script may call the API of this origin */
  connect?: boolean;
  /** where forms may be sent, redirects after a submission included (Chromium applies it to them) */
  formAction?: readonly string[];
}

export function pagePolicy(nonce: string, allow: PageAllowances = {}): string {
  return [
    "default-src 'none'",
    `script-src ${allow.script ? `'nonce-${nonce}'` : "'none'"}`,
    `style-src 'nonce-${nonce}'`,
    ...(allow.connect ? ["connect-src 'self'"] : []),
    `form-action ${allow.formAction?.length ? allow.formAction.join(" ") : "'none'"}`,
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/**
 * A whole page: the head every page shares (no referrer sent on, the style under the nonce) and
 * the markup of its body, which already holds any script under the same nonce.
 */
export function pageDocument(page: { nonce: string; title: string; style: string; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)} · bizctl</title>
<style nonce="${page.nonce}">${page.style}</style>
</head>
<body>
${page.body}
</body>
</html>
`;
}
