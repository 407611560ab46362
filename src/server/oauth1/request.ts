import { invalid } from "../problem-error.js";
import { baseStringUri, OAuthSyntaxError, type Param, parseAuthorizationHeader, parseForm } from "./signature.js";

/**
 * What the signature covers of an HTTP request, as plain values: a Fastify request has each of
 * them under these names, so the routes hand theirs over as it is.
 */
export interface HttpRequestParts {
  method: string;
  /** the request target as received: the path and the query */
  url: string;
  /** the scheme and the host the client reached (the forwarded ones behind a trusted proxy) */
  protocol: string;
  host: string | undefined;
  headers: { authorization?: string; "content-type"?: string };
  /** the body as text, when the route keeps a form body raw */
  body?: unknown;
}

/** What the OAuth layer reads of an HTTP request: its signed parameters and the URL they were signed for. */
export interface OAuthRequest {
  method: string;
  /** the absolute URL the signature covers (scheme, host, path; the query is in `params`) */
  url: string;
  /**
   * With a public URL configured: the URL as the request reached this server, which `url`
   * replaces. A signature that matches it instead says the client signed for another address.
   */
  reachedUrl?: string;
  /** header (without realm), query and form-body parameters, all of them, in that order */
  params: Param[];
  /** the `oauth_*` parameters, each present once */
  oauth: Map<string, string>;
  /** the request carried `Authorization: OAuth ...` */
  signedHeader: boolean;
}

export const FORM_MEDIA_TYPE = "application/x-www-form-urlencoded";
/** More parameters than any real request carries: refused before sorting them. */
const MAX_PARAMETERS = 1000;

/** The URL the client signed: under the configured public URL when there is one, else as the request reached us. */
export function signedUrl(request: HttpRequestParts, publicUrl: string | undefined): string {
  const path = request.url.split("?")[0]!.split("#")[0]!;
  if (publicUrl) {
    const base = new URL(publicUrl);
    return `${base.origin}${base.pathname.replace(/\/+$/, "")}${path}`;
  }
  const host = request.host;
  if (!host) throw invalid("The request has no Host header, so its signature cannot be checked.");
  return `${request.protocol}://${host}${path}`;
}

/**
 * The URL as the request reached this server, in the form a signature covers (`:80` and the
 * case of the host dropped); undefined when its Host says none that could be signed.
 */
function reachedAddress(request: HttpRequestParts): string | undefined {
  if (!request.host) return undefined;
  try {
    return baseStringUri(signedUrl(request, undefined));
  } catch (error) {
    if (error instanceof OAuthSyntaxError) return undefined;
    throw error;
  }
}

/** Whether the request carries a form body, kept as text. */
export function hasFormBody(request: HttpRequestParts): boolean {
  const type = String(request.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim()
    .toLowerCase();
  return type === FORM_MEDIA_TYPE && typeof request.body === "string";
}

/** The first value of each name of a form (or query) string; undefined when it does not decode. */
export function firstFormValues(text: string): Map<string, string> | undefined {
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
 * Collects the parameters of section 3.4.1.3.1: the OAuth Authorization header, the query (read
 * as a form, `+` is a space), and a single-part form body (`withBody`: only where the body has
 * been parsed, i.e. on the OAuth endpoint). Protocol parameters may not repeat (section 3.1).
 */
export function readOAuthRequest(
  request: HttpRequestParts,
  options: { publicUrl?: string; withBody: boolean },
): OAuthRequest {
  let header: Param[] | undefined;
  let params: Param[];
  let url: string;
  try {
    url = signedUrl(request, options.publicUrl);
    baseStringUri(url);
    header = parseAuthorizationHeader(request.headers.authorization);
    const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?") + 1).split("#")[0]! : "";
    params = [
      ...(header ?? []),
      ...parseForm(query, "The query string"),
      ...(options.withBody && hasFormBody(request) ? parseForm(request.body as string, "The form body") : []),
    ];
  } catch (error) {
    if (error instanceof OAuthSyntaxError) throw invalid(error.message);
    throw error;
  }
  if (params.length > MAX_PARAMETERS) throw invalid(`The request has more than ${MAX_PARAMETERS} parameters.`);
  const oauth = new Map<string, string>();
  for (const [name, value] of params) {
    if (!name.startsWith("oauth_")) continue;
    if (oauth.has(name)) throw invalid(`The OAuth parameter ${name} appears more than once.`);
    oauth.set(name, value);
  }
  if (oauth.has("oauth_token_secret")) {
    throw invalid("oauth_token_secret is never sent: it only signs. Remove it from the request.");
  }
  const reachedUrl = options.publicUrl ? reachedAddress(request) : undefined;
  return {
    method: request.method,
    url,
    ...(reachedUrl !== undefined && reachedUrl !== baseStringUri(url) && { reachedUrl }),
    params,
    oauth,
    signedHeader: !!header,
  };
}
