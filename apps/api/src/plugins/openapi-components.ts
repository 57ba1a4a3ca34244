/**
 * Named schemas in the OpenAPI document: a route schema (or a part of one) with an `$id` appears
 * once, in `components.schemas` under that name, and everywhere else as a `$ref` to it. The route's
 * own schema is left as it is, so validation and serialisation do not change.
 */

type Json = Record<string, unknown>;

export const COMPONENTS = '#/components/schemas/';

/** Keys that describe one use of a named schema (a response's description, its error codes), not the schema. */
const USE_KEYS = ['x-response-description', 'x-error-codes'];
/** Keys whose values are data, not schemas: never searched for `$id`. */
const DATA_KEYS = new Set(['examples', 'example', 'default', 'enum', 'const']);

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON with sorted keys: two schemas are the same whatever order their keys were written in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (!isObject(value)) return JSON.stringify(value);
  return `{${Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
    .join(',')}}`;
}

function register(components: Json, name: string, schema: Json): void {
  const existing = components[name];
  if (existing !== undefined && canonical(existing) !== canonical(schema)) {
    throw new Error(`Two different schemas have the $id '${name}': give one of them another name.`);
  }
  components[name] = schema;
}

function walk(value: unknown, components: Json, root: boolean): unknown {
  if (Array.isArray(value)) return value.map((item) => walk(item, components, false));
  if (!isObject(value)) return value;
  const copy: Json = {};
  for (const [key, item] of Object.entries(value)) copy[key] = DATA_KEYS.has(key) ? item : walk(item, components, false);
  const { $id: name, ...schema } = copy;
  if (typeof name !== 'string') return copy;
  const use = Object.fromEntries(USE_KEYS.filter((key) => key in schema).map((key) => [key, schema[key]]));
  for (const key of USE_KEYS) delete schema[key];
  register(components, name, schema);
  // At the root of a body or a response, its examples become the media type's example (Swagger UI's "Try it out").
  return { $ref: COMPONENTS + name, ...(root && { ...use, ...(schema.examples !== undefined && { examples: schema.examples }) }) };
}

/** A copy of `schema` in which every schema with an `$id` is a `$ref`, its component added to `components` on first sight. */
export function referenceNamed(schema: unknown, components: Json): unknown {
  return walk(schema, components, true);
}

/** The component a `$ref` points to, or the schema itself. */
export function dereference(schema: Json, components: Json): Json {
  const ref = schema.$ref;
  return typeof ref === 'string' && ref.startsWith(COMPONENTS) ? ((components[ref.slice(COMPONENTS.length)] as Json | undefined) ?? schema) : schema;
}
