import type { onSendHookHandler } from "fastify";
import { noneMatchHits } from "../http/preconditions.js";

/**
 * A GET or HEAD whose If-None-Match names the ETag of the answer gets 304 without a body
 * (RFC 9110 section 13.1.2): a client or cache that holds the representation is told it still
 * holds. Decided on the finished answer. An onSend hook of the routes whose answers carry an
 * ETag alone (routes/register.ts): as a hook of the app, every answer paid for it, `/health` and
 * the login included.
 */
export const answerNotModified: onSendHookHandler = (request, reply, payload, done) => {
  const condition = request.headers["if-none-match"];
  if (condition === undefined || reply.statusCode !== 200) return done(null, payload);
  if (request.method !== "GET" && request.method !== "HEAD") return done(null, payload);
  const etag = reply.getHeader("etag");
  if (typeof etag !== "string" || !noneMatchHits(condition, etag)) return done(null, payload);
  reply.status(304).removeHeader("content-type");
  // a HEAD keeps its payload for Fastify's HEAD handling to measure and drop: the Content-Length
  // it then sends is the 200's, which RFC 9110 section 8.6 allows on a 304
  done(null, request.method === "HEAD" ? payload : null);
};
