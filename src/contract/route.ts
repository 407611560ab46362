import type { Static, TSchema } from "@sinclair/typebox";
import type { ErrorCode } from "./errors.js";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** Who may call an operation. `roles` lists the User roles allowed; `public` needs no credential. */
export type Access =
  | { public: true }
  | {
      public?: false;
      roles: readonly Role[];
      /** a user whose temporary password is still pending may call it */
      duringFirstLogin?: boolean;
      /**
       * a user whom `server start --require-mfa` confines to enrolling a second factor may call it
       * (spec 1.7): the enrollment itself, and what any signed-in session needs (logout, isLogged)
       */
      duringMfaEnrollment?: boolean;
      /**
       * it manages an account (sessions, passwords, OAuth grants): only a user's own login may,
       * never a credential delegated to an application, which acts on data, not on the account
       */
      managesAccount?: boolean;
      /**
       * The API-token scope that covers the operation (spec 1.7), checked at every request a token
       * makes: `"any"` for what every token may call (the caller's own identity). Without one, an
       * API token may not call the operation at all (403), whatever its scopes.
       */
      scope?: ApiTokenScope | "any";
    };

/** The roles a User holds, the one place they are written. */
export const ROLES = ["admin", "support", "member"] as const;
export type Role = (typeof ROLES)[number];

/**
 * What an API token may be limited to (spec 1.7). A scope narrows what the token's owner may do,
 * never widens it: the owner's current roles still decide every operation.
 */
export const API_TOKEN_SCOPES = [
  "events:read",
  "events:write",
  "resources:read",
  "resources:write",
  "audit:read",
] as const;
export type ApiTokenScope = (typeof API_TOKEN_SCOPES)[number];

/** Every role: any signed-in user. */
export const EVERYONE: readonly Role[] = ROLES;
/** The staff: the roles that act on other people's accounts, and that make an account privileged. */
export const STAFF: readonly Role[] = ["admin", "support"];
/** Who writes events. */
export const EVENT_WRITERS: readonly Role[] = ["admin", "member"];

/**
 * One operation of the API: the single source of its path, schemas and access rule.
 * Paths use Fastify's `:param` syntax; `aliases` are further paths served by the same handler.
 */
export interface RouteEntry {
  readonly id: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly aliases?: readonly string[];
  readonly summary: string;
  readonly tags: readonly string[];
  readonly access: Access;
  readonly params?: TSchema;
  readonly query?: TSchema;
  readonly body?: TSchema;
  /** request bodies in media types other than JSON, for an operation that reads one (a form) */
  readonly requestContent?: Readonly<Record<string, TSchema>>;
  /** success status → body schema (`null` for no body) */
  readonly responses: Readonly<Record<number, TSchema | null>>;
  /**
   * Answers in media types other than JSON, per status (a page, a form-encoded body), with the
   * schema of each; they stand beside the JSON body of `responses` (or an error status's problem
   * document) in the OpenAPI document.
   */
  readonly content?: Readonly<Record<number, Readonly<Record<string, TSchema>>>>;
  /**
   * The problem codes the operation answers besides those that follow from the rest of the entry
   * (its access rule, its schemas, its path parameters, `etag`): a conflict, a filter refused.
   */
  readonly errors?: readonly ErrorCode[];
  /**
   * The answers carry an ETag and the operation honours it: If-Match on a write (412 when it no
   * longer holds), If-None-Match on a read (304 when it names the current one).
   */
  readonly etag?: true;
  /**
   * The SCIM conventions (RFC 7644) the operation follows. `"wire"`: a SCIM endpoint, whose
   * answers and errors are `application/scim+json` (errors as SCIM error bodies that keep the
   * problem's `code` and `title`), and whose query parameter names are read in any case.
   * `"query"`: only the query parameter names are read in any case (the SCIM-style /Resources).
   */
  readonly scim?: "wire" | "query";
  /**
   * Query parameter names are read in any case (`pageSize` as `pagesize`), as on SCIM's: the
   * parameters are all lower-case, and a camel-cased spelling is how most APIs write them.
   */
  readonly queryNamesAnyCase?: true;
}

export function defineRoute<const E extends RouteEntry>(entry: E): E {
  return entry;
}

type StaticOr<S, Fallback> = S extends TSchema ? Static<S> : Fallback;

export type ParamsOf<E extends RouteEntry> = StaticOr<E["params"], undefined>;
export type QueryOf<E extends RouteEntry> = StaticOr<E["query"], undefined>;
export type BodyOf<E extends RouteEntry> = StaticOr<E["body"], undefined>;
type SuccessSchemas<E extends RouteEntry> = E["responses"][keyof E["responses"]];
export type ResponseOf<E extends RouteEntry> =
  SuccessSchemas<E> extends infer S ? (S extends TSchema ? Static<S> : undefined) : never;

/** Fills `:name` and `:name?` segments of a contract path; missing optional segments are dropped. */
export function buildPath(path: string, params: Record<string, string | undefined> = {}): string {
  return path.replace(/\/:([A-Za-z0-9_]+)(\?)?/g, (_whole, name: string, optional?: string) => {
    const value = params[name];
    if (value === undefined || value === "") {
      if (optional) return "";
      throw new Error(`missing path parameter ${name}`);
    }
    return `/${encodeURIComponent(value)}`;
  });
}
