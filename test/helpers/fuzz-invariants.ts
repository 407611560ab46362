/**
 * What every answer to a fuzzed request must satisfy, whatever was sent:
 * - never a 5xx;
 * - every 4xx is an RFC 9457 problem document whose `code` the contract lists (the OAuth
 *   authorization page excepted: it answers a browser with a page);
 * - a refused request (4xx) changes nothing in the database;
 * - no answer shows a password, a hash or a token that was not issued to this caller;
 * - every answer of the app carries its security headers and request id, errors too.
 * Each check returns what is wrong, or nothing; the test turns that into a failure that shows the
 * request, so that fast-check's counterexample reads on its own.
 */
import { ERROR_CODES, PROBLEM_CONTENT_TYPE } from "../../src/contract/errors.js";
import { type DatabaseDigest, digestDifference } from "./db-digest.js";

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const LISTED = new Set<string>(ERROR_CODES);

export function serverError(answer: Answer): string | undefined {
  return answer.status >= 500 ? `answered ${answer.status}: ${answer.body.slice(0, 400)}` : undefined;
}

export function notAProblem(answer: Answer): string | undefined {
  if (answer.status < 400 || answer.status >= 500) return undefined;
  const contentType = String(answer.headers["content-type"] ?? "");
  const show = () => `${answer.status} ${contentType} ${answer.body.slice(0, 300)}`;
  if (!contentType.startsWith(PROBLEM_CONTENT_TYPE))
    return `a ${answer.status} that is not a problem document: ${show()}`;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return `a problem document that is not JSON: ${show()}`;
  }
  if (typeof problem.code !== "string" || !LISTED.has(problem.code)) {
    return `a problem whose code ${JSON.stringify(problem.code)} the contract does not list: ${show()}`;
  }
  if (problem.status !== answer.status) return `a problem whose status differs from the HTTP status: ${show()}`;
  for (const member of ["type", "title", "detail"]) {
    if (typeof problem[member] !== "string") return `a problem without a string ${member}: ${show()}`;
  }
  if (/\n\s+at /.test(answer.body)) return `a stack trace in the answer: ${show()}`;
  return undefined;
}

/**
 * The OAuth authorization page (src/server/oauth/browser.ts, and the contract's description of
 * /oAuth) answers a browser with a page, its refusals too: a 400 page for a token it cannot use is
 * read by a person, not a program. Only an unsigned GET that accepts HTML, or the page's own form
 * posted back, reaches it; anything else from /oAuth is a problem document like every answer.
 */
export function authorizationPage(
  routeId: string,
  request: { method: string; headers: Record<string, string> },
  answer: Answer,
): boolean {
  if (routeId !== "oauth.get" && routeId !== "oauth.post") return false;
  if (!String(answer.headers["content-type"] ?? "").startsWith("text/html")) return false;
  if (!answer.body.startsWith("<!doctype html>")) return false;
  return request.method === "GET"
    ? /\btext\/html\b/i.test(request.headers.accept ?? "")
    : /^application\/x-www-form-urlencoded\b/i.test(request.headers["content-type"] ?? "");
}

export function changedOnRefusal(answer: Answer, before: DatabaseDigest, after?: DatabaseDigest): string | undefined {
  if (answer.status < 400 || !after || before.hash === after.hash) return undefined;
  return `a refused request (${answer.status}) changed the database:\n${digestDifference(before, after)}`;
}

/** Password fields of a JSON body long enough that finding them in an answer is no coincidence. */
export function sentPasswords(body: unknown): string[] {
  const out: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === "object") {
      for (const [key, v] of Object.entries(value)) {
        if (/password/i.test(key) && typeof v === "string" && v.length >= 12) out.push(v);
        else walk(v);
      }
    }
  };
  walk(body);
  return out;
}

export function leaksSecret(answer: Answer, hidden: readonly string[]): string | undefined {
  const text = `${Object.entries(answer.headers)
    .map(([name, value]) => `${name}: ${String(value)}`)
    .join("\n")}\n${answer.body}`;
  if (text.includes("$argon2")) return `a password hash in the answer: ${answer.body.slice(0, 300)}`;
  const found = hidden.find((secret) => text.includes(secret) || text.includes(encodeURIComponent(secret)));
  return found ? `the answer shows a secret not issued to this caller (${found.slice(0, 12)}…)` : undefined;
}

/** The headers the app promises on every answer (src/server/plugins/security-headers.ts). */
export function withoutSecurityHeaders(answer: Answer): string | undefined {
  const missing = ["x-content-type-options", "content-security-policy", "cache-control", "x-request-id"].filter(
    (name) => answer.headers[name] === undefined,
  );
  return missing.length > 0
    ? `a ${answer.status} without ${missing.join(", ")}: ${answer.body.slice(0, 200)}`
    : undefined;
}
