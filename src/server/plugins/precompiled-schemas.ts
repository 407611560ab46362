/**
 * Each route's validators and serializers, compiled by the build (scripts/build.mjs) with
 * Fastify's standalone compilers and bundled as code, so that an embedded command runs the
 * route's compiled functions from the code cache instead of building an ajv instance and
 * generating them again. The build puts the table in place of this module in the server bundle;
 * from the sources (the tests, tsc) there is none, and every route compiles when first used.
 *
 * Keys: `METHOD url httpPart` for validators, `METHOD url httpStatus contentType` for serializers,
 * as Fastify describes the route it asks a compiler for (routeKey in lazy-compilers.ts).
 */
export interface PrecompiledSchemas {
  validators: Record<string, () => unknown>;
  serializers: Record<string, () => unknown>;
}

export const precompiledSchemas: PrecompiledSchemas | undefined = undefined;
