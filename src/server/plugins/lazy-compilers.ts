import ValidatorSelector from "@fastify/ajv-compiler";
import SerializerSelector from "@fastify/fast-json-stringify-compiler";
import { type PrecompiledSchemas, precompiledSchemas } from "./precompiled-schemas.js";

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
type Serializer = (data: unknown) => string;
type Compile<F> = (route: unknown) => F;

/** What Fastify tells a compiler of the schema it wants compiled. */
interface RouteSchema {
  method: string;
  url: string;
  httpPart?: string;
  httpStatus?: string;
  contentType?: string;
}

/** The key of a route's compiled function in the build's table (precompiled-schemas.ts). */
export function routeKey(route: RouteSchema): string {
  return route.httpPart !== undefined
    ? `${route.method} ${route.url} ${route.httpPart}`
    : `${route.method} ${route.url} ${route.httpStatus} ${route.contentType}`;
}

function lazyValidator(compile: () => Validator): Validator {
  let compiled: Validator | undefined;
  const validate: Validator = (data) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  return validate;
}

function lazySerializer(compile: () => Serializer): Serializer {
  let serialize: Serializer | undefined;
  return (data) => {
    serialize ??= compile();
    return serialize(data);
  };
}

/** How many of this process's routes compiled a schema at run time, and how many took the build's. */
const compiled = { atRunTime: 0, precompiled: 0 };

export function schemaCompilations(): { atRunTime: number; precompiled: number } {
  return { ...compiled };
}

/**
 * For each route, what makes its function on first use: the build's unit where the table has
 * one, else a compile now, by a compiler made on the first route that needs it.
 */
function firstUse<F>(table: Record<string, () => unknown> | undefined, makeCompiler: () => Compile<F>) {
  let compile: Compile<F> | undefined;
  return (route: RouteSchema) => {
    const restore = table?.[routeKey(route)];
    return (): F => {
      if (restore) {
        compiled.precompiled++;
        return restore() as F;
      }
      compiled.atRunTime++;
      compile ??= makeCompiler();
      return compile(route);
    };
  };
}

/**
 * Fastify's compilers for the embedded CLI, which builds the whole app to serve one request:
 * a route's schemas are compiled when it is first used, not when the app starts (compiling
 * every route's was a quarter of the start-up), and where the build compiled them already
 * (precompiled-schemas.ts) the route takes that code and no ajv is made at all. A server
 * compiles everything eagerly with Fastify's own.
 */
export function lazySchemaController(precompiled: PrecompiledSchemas | undefined = precompiledSchemas) {
  // each selector keeps one ajv (or serializer builder) per set of shared schemas: made once
  const validators = ValidatorSelector() as (e: unknown, o: unknown) => Compile<Validator>;
  const serializers = SerializerSelector() as (e: unknown, o: unknown) => Compile<Serializer>;
  return {
    compilersFactory: {
      buildValidator(externalSchemas: unknown, ajvOptions: unknown) {
        const make = firstUse(precompiled?.validators, () => validators(externalSchemas, ajvOptions));
        return (route: RouteSchema) => lazyValidator(make(route));
      },
      buildSerializer(externalSchemas: unknown, options: unknown) {
        const make = firstUse(precompiled?.serializers, () => serializers(externalSchemas, options));
        return (route: RouteSchema) => lazySerializer(make(route));
      },
    },
  };
}
