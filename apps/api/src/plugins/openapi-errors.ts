import { STATUS_CODES } from 'node:http';
import { ERRORS, type ErrorCode } from '@smsgw/core';
import { ErrorBody } from '../schemas/common.ts';
import { ERROR_CODES_KEY } from '../schemas/errors.ts';
import { dereference, referenceNamed } from './openapi-components.ts';

/**
 * The responses of an operation as the OpenAPI document shows them: each with a description, and
 * each error with the codes of the catalogue it stands for (named by the route with `errors(…)`,
 * or the one code of its status): in its description, as one named example body per code, and as
 * the enum of its `error`.
 */

type Json = Record<string, unknown>;

const DESCRIPTION = 'x-response-description';

/** One of the named examples of a media type (OpenAPI's Example Object). */
export interface NamedExample {
  summary: string;
  value: unknown;
}

/**
 * What the document says of one response besides its schema (@fastify/swagger drops the siblings
 * of a root `$ref`): a success's example, or an error's examples named by their codes, so that
 * generated clients and API tools see every code, not only the first.
 */
export interface ResponseDoc {
  description: string;
  example?: unknown;
  examples?: Record<string, NamedExample>;
}

/** The code an error status stands for when the route names none: the only one of that status, or the general one. */
function codesOf(status: number, operation: string): ErrorCode[] {
  const codes = (Object.keys(ERRORS) as ErrorCode[]).filter((code) => ERRORS[code].status === status && !('messageOnly' in ERRORS[code]));
  if (codes.length === 1) return codes;
  const general = ({ 400: 'invalid_request', 503: 'service_unavailable' } as Partial<Record<number, ErrorCode>>)[status];
  if (general) return [general];
  throw new Error(`${operation}: name the codes of its ${status} response with errors(…) (apps/api/src/schemas/errors.ts).`);
}

export function errorExample(code: ErrorCode): Json {
  return 'messageOnly' in ERRORS[code] ? { message: ERRORS[code].message } : { error: code, message: ERRORS[code].message };
}

/** One named example per code, in the order the description lists them: `{invalid_phone_number: {summary, value}, …}`. */
export function errorExamples(codes: ErrorCode[]): Record<string, NamedExample> {
  return Object.fromEntries(codes.map((code) => [code, { summary: ERRORS[code].message, value: errorExample(code) }]));
}

function describeErrors(status: number, codes: ErrorCode[]): string {
  return [
    `${STATUS_CODES[status]}, error code:`,
    ...codes.map((code) => `- \`${code}\`: ${ERRORS[code].message}${'messageOnly' in ERRORS[code] ? ' (the body has only `message`)' : ''}`),
  ].join('\n');
}

/** The schema's own description, else the operation's summary after the status: "OK: list devices". */
function describeSuccess(status: number, schema: Json, components: Json, summary: string | undefined): string {
  const own = schema[DESCRIPTION] ?? schema.description ?? dereference(schema, components).description;
  if (typeof own === 'string') return own;
  if (status === 204) return 'Done; no content.';
  return summary ? `${STATUS_CODES[status]}: ${summary[0]!.toLowerCase()}${summary.slice(1)}.` : `${STATUS_CODES[status]}.`;
}

/**
 * An error response's schema with `error` narrowed to its codes (an enum), so that generated
 * clients type the codes: `Error` itself where the member is `Error`, in an `allOf`, and the
 * message-only bodies of send-template as they are.
 */
function withCodes(schema: Json, codes: ErrorCode[], components: Json): Json {
  const coded = codes.filter((code) => !('messageOnly' in ERRORS[code]));
  const narrow = (member: Json): Json => {
    const body = dereference(member, components);
    if (!isObject(body.properties) || !('error' in body.properties)) return member;
    return { allOf: [member, { type: 'object', properties: { error: { type: 'string', enum: coded } } }] };
  };
  const members = schema.anyOf as Json[] | undefined;
  return members ? { ...schema, anyOf: members.map(narrow) } : narrow(schema);
}

/** Whether a response is `{error, message}` (or may be): not, e.g., the 503 of /ready, which reports its checks. */
function isErrorBody(schema: Json, components: Json): boolean {
  const members = [schema, ...((schema.anyOf as Json[] | undefined) ?? [])].map((member) => dereference(member, components));
  return members.some((member) => isObject(member.properties) && 'error' in member.properties);
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/**
 * `responses` (already with `$ref`s) and what to say of each; `validatesInput`: the route has a body,
 * query or path parameters, so it can answer 400 `invalid_request` whether or not its schema says so.
 */
export function documentResponses(
  responses: Record<string, Json>,
  { operation, summary, validatesInput, components }: { operation: string; summary?: string; validatesInput: boolean; components: Json },
): { schemas: Record<string, Json>; docs: Record<string, ResponseDoc> } {
  const all = { ...responses };
  if (validatesInput) {
    const current = all['400'] ?? (referenceNamed(ErrorBody, components) as Json);
    const codes = (current[ERROR_CODES_KEY] as ErrorCode[] | undefined) ?? [];
    all['400'] = { ...current, [ERROR_CODES_KEY]: codes.includes('invalid_request') ? codes : ['invalid_request', ...codes] };
  }
  const schemas: Record<string, Json> = {};
  const docs: Record<string, ResponseDoc> = {};
  for (const [key, schema] of Object.entries(all)) {
    const { [ERROR_CODES_KEY]: named, [DESCRIPTION]: _description, examples, ...rest } = schema;
    const status = Number(key);
    if (status < 400 || !isErrorBody(schema, components)) {
      schemas[key] = rest;
      docs[key] = { description: describeSuccess(status, schema, components, summary), ...(Array.isArray(examples) && { example: examples[0] }) };
    } else {
      const codes = (named as ErrorCode[] | undefined) ?? codesOf(status, operation);
      schemas[key] = withCodes(rest, codes, components);
      docs[key] = { description: describeErrors(status, codes), examples: errorExamples(codes) };
    }
  }
  return { schemas, docs };
}
