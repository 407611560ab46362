/**
 * What every answer to a fuzzed request must satisfy, whatever was sent:
 * - never a 5xx;
 * - every 4xx is an RFC 9457 problem document whose `code` the contract lists (the OAuth
 *   authorization page excepted: it answers a browser with a page), or on a SCIM endpoint the
 *   same problem as a SCIM error body;
 * - a refused request (4xx) changes nothing in the database;
 * - no answer shows a password, a hash or a token that was not issued to this caller;
 * - every answer of the app carries its security headers and request id, errors too;
 * - text that is not well-formed Unicode is never accepted: a body or a query holding it is refused;
 * - a name every object inherits is a plain name: a read answers as it does when a made-up name
 *   stands in its place;
 * - a delegated credential (OAuth token credentials) never manages an account: no operation the
 *   contract marks `managesAccount`, and no temporary `password` written with a resource, succeeds
 *   for it.
 * Each check returns what is wrong, or nothing; the test turns that into a failure that shows the
 * request, so that fast-check's counterexample reads on its own.
 */
import { ERROR_CODES, PROBLEM_CONTENT_TYPE } from "../../src/contract/errors.js";
import { SCIM_MEDIA_TYPE, SCIM_URN } from "../../src/contract/scim.js";
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

/**
 * A refusal of a SCIM endpoint (a route the contract marks `scim: "wire"`) that is not a SCIM error
 * (RFC 7644 section 3.12) carrying the problem's members: the Error schema, its status as a string,
 * a listed code, a title and a detail.
 */
function notAScimError(answer: Answer, show: () => string): string | undefined {
  let error: Record<string, unknown>;
  try {
    error = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return `a SCIM error that is not JSON: ${show()}`;
  }
  if (JSON.stringify(error.schemas) !== JSON.stringify([SCIM_URN.error]))
    return `a SCIM error without its schema: ${show()}`;
  if (error.status !== String(answer.status)) return `a SCIM error whose status is not "${answer.status}": ${show()}`;
  if (typeof error.code !== "string" || !LISTED.has(error.code)) {
    return `a SCIM error whose code ${JSON.stringify(error.code)} the contract does not list: ${show()}`;
  }
  for (const member of ["title", "detail"]) {
    if (typeof error[member] !== "string") return `a SCIM error without a string ${member}: ${show()}`;
  }
  if (/\n\s+at /.test(answer.body)) return `a stack trace in the answer: ${show()}`;
  return undefined;
}

/** `scimWire`: the operation is a SCIM endpoint, whose refusals are SCIM errors (or, off its route, problems). */
export function notAProblem(answer: Answer, scimWire = false): string | undefined {
  if (answer.status < 400 || answer.status >= 500) return undefined;
  const contentType = String(answer.headers["content-type"] ?? "");
  const show = () => `${answer.status} ${contentType} ${answer.body.slice(0, 300)}`;
  if (scimWire && contentType.startsWith(SCIM_MEDIA_TYPE)) return notAScimError(answer, show);
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
 * The OAuth authorization page (src/server/services/oauth-authorization-page.ts, and the contract's description of
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
  // a password with a lone surrogate has no URL form (encodeURIComponent throws on it)
  const found = hidden.find(
    (secret) => text.includes(secret) || (secret.isWellFormed() && text.includes(encodeURIComponent(secret))),
  );
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

const JSON_MEDIA_TYPE = /^application\/(?:scim\+)?json\s*(?:;|$)/i;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The JSON Pointer of a string or member name in `value` that is not well-formed Unicode, if any. */
function illFormedAt(value: unknown, pointer = ""): string | undefined {
  if (typeof value === "string") return value.isWellFormed() ? undefined : pointer || "/";
  if (!value || typeof value !== "object") return undefined;
  for (const [key, item] of Object.entries(value)) {
    if (!key.isWellFormed()) return `${pointer}/ (a member name)`;
    const found = illFormedAt(item, `${pointer}/${key}`);
    if (found) return found;
  }
  return undefined;
}

function notUtf8(bytes: Buffer): boolean {
  try {
    utf8.decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/** The first `name=value` piece whose percent-escapes do not decode as UTF-8. */
function undecodablePiece(query: string): string | undefined {
  return query.split("&").find((piece) => {
    try {
      decodeURIComponent(piece.replace(/\+/g, " "));
      return false;
    } catch {
      return true;
    }
  });
}

/**
 * A success although the request held text that is not Unicode where the operation reads it: a
 * JSON body (of an operation that takes one) with a lone surrogate or bytes that are not UTF-8, a
 * query (of an operation that declares one) with escapes that are not UTF-8.
 */
export function acceptedIllFormedText(
  answer: Answer,
  sent: { contentType?: string; json?: unknown; bytes?: Buffer; query?: string },
): string | undefined {
  if (answer.status >= 400) return undefined;
  if (sent.contentType !== undefined && JSON_MEDIA_TYPE.test(sent.contentType)) {
    const at = sent.json === undefined ? undefined : illFormedAt(sent.json);
    if (at) return `a ${answer.status} for a body with a lone surrogate at ${at}`;
    if (sent.bytes && notUtf8(sent.bytes)) return `a ${answer.status} for a body that is not UTF-8`;
  }
  const piece = sent.query && undecodablePiece(sent.query);
  return piece ? `a ${answer.status} for the query piece ${piece.slice(0, 80)}, which is not UTF-8` : undefined;
}

/** A read whose answer changed when the names every object inherits gave way to made-up ones. */
export function dependsOnInheritedName(answer: Answer, twin: Answer, twinUrl: string): string | undefined {
  if (answer.status === twin.status) return undefined;
  return `answered ${answer.status}, but ${twin.status} with made-up names in place of inherited ones (${twinUrl.slice(0, 200)}): ${answer.body.slice(0, 200)}`;
}

/** Whether a PATCH body (RFC 7644 section 3.5.2) has an add or replace that writes a `password`. */
function patchSetsPassword(body: unknown): boolean {
  const operations = (body as { Operations?: unknown } | undefined)?.Operations;
  if (!Array.isArray(operations)) return false;
  return operations.some((operation: { op?: unknown; path?: unknown; value?: unknown }) => {
    if (typeof operation?.op !== "string" || operation.op.toLowerCase() === "remove") return false;
    const path = typeof operation.path === "string" ? operation.path.trim().toLowerCase() : "";
    if (path === "password" || path.endsWith(":password")) return operation.value !== undefined;
    const value = operation.value as Record<string, unknown> | undefined;
    return path === "" && !!value && typeof value === "object" && Object.keys(value).some((k) => /password$/i.test(k));
  });
}

/**
 * A delegated credential managed an account: an operation marked `managesAccount`, or a resource
 * written with a `password` (a temporary password, in a body or by a PATCH operation), answered a
 * success to OAuth token credentials.
 */
export function delegatedManagedAccount(
  route: { access: { public?: boolean; managesAccount?: boolean } },
  request: { caller: string; body: { kind: string; value?: unknown } },
  answer: Answer,
): string | undefined {
  if (request.caller !== "oauth" || answer.status >= 400) return undefined;
  if ("managesAccount" in route.access && route.access.managesAccount) {
    return `an application (token credentials) managed an account: ${answer.status}`;
  }
  const value = request.body.kind === "json" ? request.body.value : undefined;
  if (value && typeof value === "object" && !Array.isArray(value) && Object.hasOwn(value, "password")) {
    const setsPassword = (value as { password?: unknown }).password !== undefined;
    if (setsPassword) return `an application (token credentials) set a password: ${answer.status}`;
  }
  if (patchSetsPassword(value)) return `an application (token credentials) set a password by PATCH: ${answer.status}`;
  return undefined;
}
