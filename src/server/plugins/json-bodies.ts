import type { FastifyInstance } from "fastify";
import secureJson from "secure-json-parse";
import { MAX_JSON_DEPTH, nestsDeeperThan } from "../http/json-depth.js";
import { illFormedText } from "../http/well-formed.js";
import { ProblemError } from "../problem-error.js";
import { followsScim } from "./scim-wire.js";

export const JSON_MEDIA_TYPES = ["application/json", "application/scim+json"];

/**
 * The bodies the API reads: JSON only (anything else is a 415), valid UTF-8, nested at most
 * MAX_JSON_DEPTH levels, without prototype keys, and well-formed Unicode text.
 */
export function installJsonBodies(app: FastifyInstance): void {
  // JSON bodies must be valid UTF-8; the default parser would silently replace bad bytes
  app.removeContentTypeParser("application/json");
  // Fastify parses text/plain by default; every body here is JSON, so anything else is a 415
  app.removeContentTypeParser("text/plain");
  const decoder = new TextDecoder("utf-8", { fatal: true });
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: "buffer" }, (request, body, done) => {
    // SCIM calls a body that is not JSON (or not text) invalidSyntax (RFC 7644 section 3.12)
    const syntax = followsScim(request) ? { scimType: "invalidSyntax" } : {};
    const buffer = body as Buffer;
    if (buffer.length === 0) return done(null, undefined);
    let text: string;
    try {
      text = decoder.decode(buffer);
    } catch {
      return done(new ProblemError("validation_failed", "The body is not valid UTF-8.", syntax), undefined);
    }
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      return done(
        new ProblemError("validation_failed", `The body nests deeper than ${MAX_JSON_DEPTH} levels.`, syntax),
        undefined,
      );
    }
    let value: unknown;
    try {
      value = secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" });
    } catch (error) {
      return done(
        new ProblemError("validation_failed", `The body is not valid JSON: ${(error as Error).message}`, syntax),
        undefined,
      );
    }
    const illFormed = illFormedText(text, value);
    if (illFormed) {
      const detail = `The body is not valid: ${illFormed.path}: ${illFormed.message}.`;
      return done(new ProblemError("validation_failed", detail, { errors: [illFormed] }), undefined);
    }
    done(null, value);
  });
}
