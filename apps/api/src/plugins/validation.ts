import type { FastifySchemaCompiler, FastifySchemaValidationError, RouteOptions } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Format, IsDateTime } from 'typebox/format';
import { Value } from 'typebox/value';
import { convertText } from '@smsgw/config';
import { readInstant } from '@smsgw/core';

// A `date-time` is RFC 3339 text that reads as an instant Postgres can store: not year 0 or
// 10000, not an RFC 9557 `[zone]` suffix, which JavaScript's Date cannot read. A route reads it
// with `readInstant`, so that a leap second is the millisecond before it.
Format.Set('date-time', (value) => IsDateTime(value) && readInstant(value) !== undefined);

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
 * The parameters a query schema names. A query is one flat `Type.Object` (a list's filters next to
 * `...Pagination.properties`): text is converted to numbers, and the OpenAPI document shows
 * parameters, only from an object's own properties, so an `Intersect` would let `offset=1.5` through
 * as 1 and show defaults as required. Anything else is refused when the route is registered.
 */
export function queryNames(schema: Record<string, unknown>, route: string): Set<string> {
  const properties = schema.properties as Record<string, unknown> | undefined;
  const closed = schema.additionalProperties === undefined || schema.additionalProperties === false;
  if (schema.type !== 'object' || !properties || !closed || ['allOf', 'anyOf', 'oneOf', 'patternProperties'].some((key) => key in schema)) {
    throw new Error(
      `${route}: a query schema is one Type.Object with named properties (spread Pagination.properties into it), not ${JSON.stringify(schema).slice(0, 80)}.`,
    );
  }
  return new Set(Object.keys(properties));
}

function unknownIssue(name: string): Issue {
  return {
    keyword: 'additionalProperties',
    instancePath: '',
    schemaPath: '#/additionalProperties',
    params: { additionalProperties: [name] },
    message: 'must NOT have additional properties',
  };
}

function compile(schema: TSchema, httpPart: string | undefined, strict: boolean, route: string) {
  const check = Compile(schema);
  const names = httpPart === 'querystring' ? queryNames(schema as Record<string, unknown>, route) : undefined;
  const allowed = strict ? names : undefined;
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
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart, method, url }) => compile(schema, httpPart, true, `${method} ${url}`);

/**
 * The device protocols' validation (`/api/v1/device/…`, the SMS Gate mobile API): the schema
 * alone. Phones are not refused for what they cannot help: a later app version may add query
 * parameters (the app already sends `order` on pulls), and what a phone reports or receives may
 * hold U+0000, which the device core stores as U+FFFD (`storableText`) rather than lose a report.
 */
export const lenientValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart, method, url }) =>
  compile(schema, httpPart, false, `${method} ${url}`);

const NoQuery = Type.Object({});

/** Route config of a client-compatibility read (the Vendel alias of the quota): its query stays as open as the other gateway's. */
export const OPEN_QUERY = { openQuery: true } as const;

/**
 * The user API's policy on query strings, as an `onRoute` hook: a read (GET) that declares no query
 * gets an empty one, so that every read refuses a parameter it does not name, as the lists with
 * filters do: a mistyped filter must not quietly widen an answer. The device protocols' scope
 * does not use it (phones stay lenient), nor do the health, docs and console routes; a route with
 * OPEN_QUERY is left alone.
 */
export function closeQuery(route: RouteOptions): void {
  const methods = [route.method].flat();
  const open = (route.config as { openQuery?: boolean } | undefined)?.openQuery === true;
  if (!open && route.schema?.querystring === undefined && methods.some((method) => method === 'GET' || method === 'HEAD')) {
    route.schema = { ...route.schema, querystring: NoQuery };
  }
}
