import ValidatorSelector from "@fastify/ajv-compiler";
import SerializerSelector from "@fastify/fast-json-stringify-compiler";

type Validator = ((data: unknown) => boolean) & { errors?: unknown };
type Compile<F> = (route: unknown) => F;

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

/**
 * Fastify's own compilers (ajv, fast-json-stringify), run when a route is first used instead of
 * when the app starts. The embedded CLI builds the whole app to serve one request; compiling the
 * schemas of every route was a quarter of its start-up. A server compiles them eagerly.
 */
// each selector keeps one ajv (or serializer builder) per set of shared schemas: made once
const validators = ValidatorSelector() as (e: unknown, o: unknown) => Compile<Validator>;
const serializers = SerializerSelector() as (e: unknown, o: unknown) => Compile<(data: unknown) => string>;

export const lazySchemaController = {
  compilersFactory: {
    buildValidator(externalSchemas: unknown, ajvOptions: unknown) {
      const compile = validators(externalSchemas, ajvOptions);
      return (route: unknown) => lazyValidator(() => compile(route));
    },
    buildSerializer(externalSchemas: unknown, options: unknown) {
      const compile = serializers(externalSchemas, options);
      return (route: unknown) => {
        let serialize: ((data: unknown) => string) | undefined;
        return (data: unknown) => {
          serialize ??= compile(route);
          return serialize(data);
        };
      };
    },
  },
};
