/**
 * Everything of the server the CLI calls: the app for the embedded mode, and the `server`
 * commands' entry points. The build makes this the server bundle's entry, loaded only by the
 * commands that need a server (scripts/build.mjs); a remote command never reads it.
 */

export { buildApp } from "./app.js";
export * from "./cluster.js";
export * from "./listen.js";
export * from "./offline-tasks.js";
export { routeKey, schemaCompilations } from "./plugins/lazy-compilers.js";
