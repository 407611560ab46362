// Loaded with `node --import` into a server the end-to-end tests start as a process of its own
// (cli.ts startServer): every answer its HTTP server sends (status, headers, body) is appended to
// the file BIZCTL_TEST_ANSWER_LOG names, one JSON line each, so that the test's process can hold
// them to /openapi.json (openapi-check.ts) as it holds the answers of its in-process servers.
// Plain JavaScript: it runs in the product's process, which has no TypeScript loader. Workers of
// `--workers N` load it too (cluster forks with the primary's execArgv) and append to the same file.
import { appendFileSync } from "node:fs";
import http from "node:http";

const log = process.env.BIZCTL_TEST_ANSWER_LOG;
/** Bodies are kept up to this size; a longer one is marked cut, and its body is not checked. */
const KEEP_BYTES = 1024 * 1024;

function record(request, response) {
  const chunks = [];
  let kept = 0;
  let cut = false;
  const keep = (chunk, encoding) => {
    if (chunk === undefined || chunk === null || typeof chunk === "function" || cut) return;
    const buffer = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk, typeof encoding === "string" ? encoding : "utf8");
    if (kept + buffer.length > KEEP_BYTES) {
      cut = true;
      return;
    }
    kept += buffer.length;
    chunks.push(buffer);
  };
  // Fastify hands its headers to writeHead(), where getHeaders() does not see them
  const headers = {};
  const writeHead = response.writeHead;
  response.writeHead = function (status, ...rest) {
    const given = rest.find((arg) => typeof arg === "object" && arg !== null && !Array.isArray(arg));
    if (given) for (const [name, value] of Object.entries(given)) headers[name.toLowerCase()] = value;
    return writeHead.call(this, status, ...rest);
  };
  const write = response.write;
  response.write = function (chunk, encoding, ...rest) {
    keep(chunk, encoding);
    return write.call(this, chunk, encoding, ...rest);
  };
  const end = response.end;
  response.end = function (chunk, encoding, ...rest) {
    keep(chunk, encoding);
    return end.call(this, chunk, encoding, ...rest);
  };
  response.once("finish", () => {
    const exchange = {
      method: request.method,
      url: request.url,
      status: response.statusCode,
      headers: { ...response.getHeaders(), ...headers },
      body: cut ? "" : Buffer.concat(chunks).toString("utf8"),
      cut,
    };
    appendFileSync(log, `${JSON.stringify(exchange)}\n`);
  });
}

if (log) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    // the metrics listener (--metrics-port) is not the API: its answers are not in the document
    if (event === "request" && !this[Symbol.for("bizctl.metrics-listener")]) record(args[0], args[1]);
    return emit.call(this, event, ...args);
  };
}
