import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { convertText } from '@smsgw/config';

type Issue = FastifySchemaValidationError & { params: Record<string, unknown> };

/**
 * The first string (or property name) that holds U+0000, as an instance path (`/recipients/0`):
 * Postgres text cannot store it. Iterative, so that a deeply nested body cannot overflow the stack.
 */
export function findNul(value: unknown): { path: string; inName: boolean } | undefined {
  const stack: { value: unknown; path: string }[] = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: item, path } = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return { path, inName: false };
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) stack.push({ value: item[i], path: `${path}/${i}` });
    } else if (typeof item === 'object' && item !== null) {
      const names = Object.keys(item);
      if (names.some((name) => name.includes('\u0000'))) return { path, inName: true };
      for (const name of names.reverse()) stack.push({ value: (item as Record<string, unknown>)[name], path: `${path}/${name}` });
    }
  }
  return undefined;
}

function nulIssue({ path, inName }: { path: string; inName: boolean }): Issue {
  return { keyword: 'nul', instancePath: path, schemaPath: '#', params: { inName }, message: 'must not contain a NUL character (U+0000)' };
}

/**
 * The property names an object schema allows, through `Intersect` and `Union`; undefined when it
 * allows others (`additionalProperties` or `patternProperties` set) or is no object schema.
 */
export function allowedNames(schema: Record<string, unknown>): Set<string> | undefined {
  if (schema.patternProperties !== undefined || (schema.additionalProperties !== undefined && schema.additionalProperties !== false)) return undefined;
  const parts = [schema.allOf, schema.anyOf, schema.oneOf].find(Array.isArray) as Record<string, unknown>[] | undefined;
  if (parts) {
    const names = new Set<string>();
    for (const part of parts) {
      const own = allowedNames(part);
      if (!own) return undefined;
      for (const name of own) names.add(name);
    }
    return names;
  }
  const properties = schema.properties as Record<string, unknown> | undefined;
  return properties && new Set(Object.keys(properties));
}

function unknownIssue(name: string): Issue {
  return { keyword: 'additionalProperties', instancePath: '', schemaPath: '#/additionalProperties', params: { additionalProperties: [name] }, message: 'must NOT have additional properties' };
}

function compile(schema: TSchema, httpPart: string | undefined, strict: boolean) {
  const check = Compile(schema);
  // Only a declared query string is closed: a route that reads no query has nothing a client could
  // mistype, and the send routes and `/api/plans/quota` stay as lenient as the clients the spec names.
  const allowed = strict && httpPart === 'querystring' ? allowedNames(schema as Record<string, unknown>) : undefined;
  return (value: unknown) => {
    const nul = strict ? findNul(value) : undefined;
    if (nul) return { error: [nulIssue(nul)] };
    const unknown = allowed && Object.keys(value as object).find((name) => !allowed.has(name));
    if (unknown !== undefined) return { error: [unknownIssue(unknown)] };
    const input = httpPart === 'body' ? value : convertText(schema, Value.Default(schema, value));
    if (check.Check(input)) return { value: input };
    return { error: check.Errors(input) as unknown as FastifySchemaValidationError[] };
  };
}

/**
 * Validates with TypeBox's compiler. Bodies are checked as sent: no type coercion, no defaults, no
 * removal of unknown fields. Query strings, path parameters and headers arrive as text, so their
 * defaults are applied and their values converted to the schema's types first (numbers only from
 * plain decimal text). Before the schema, every part is refused when a string in it holds U+0000
 * (Postgres cannot store it), and a query string when it has a parameter its schema does not name.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => compile(schema, httpPart, true);

/**
 * The device protocols' validation (`/api/v1/device/…`, the SMS Gate mobile API): the schema
 * alone. Phones are not refused for what they cannot help: a later app version may add query
 * parameters (the app already sends `order` on pulls), and what a phone reports or receives may
 * hold U+0000, which the device core stores as U+FFFD (`storableText`) rather than lose a report.
 */
export const lenientValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => compile(schema, httpPart, false);
