import { Type, type TSchema } from 'typebox';
import { ERRORS, type ErrorCode } from '@smsgw/core';
import { ERROR_BODY_OPTIONS, ErrorBody } from './common.ts';

/** Where an error response's schema names the codes it stands for; the OpenAPI document lists them (openapi-errors.ts). */
export const ERROR_CODES_KEY = 'x-error-codes';

/** The spec's send-template errors (`messageOnly` in the catalogue) have a `message` alone. */
export const MessageOnlyError = Type.Object(
  { message: Type.String() },
  { $id: 'MessageOnlyError', description: 'An error of send-template whose body has only a message (spec section 7).' },
);

function errorSchema(codes: ErrorCode[]): TSchema {
  const options = { [ERROR_CODES_KEY]: codes };
  if (codes.some((code) => 'messageOnly' in ERRORS[code])) return Type.Union([ErrorBody, MessageOnlyError], options);
  // ErrorBody again, with its codes: serialised exactly as ErrorBody.
  return Type.Object(ErrorBody.properties, { ...ERROR_BODY_OPTIONS, ...options });
}

/**
 * A route's error responses from the codes it can return, by the status the catalogue gives each
 * code: `errors('invalid_phone_number', 'contact_exists')` is `{ 400: …, 409: … }`.
 */
export function errors(...codes: ErrorCode[]): Record<number, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  return Object.fromEntries([...byStatus].map(([status, list]) => [status, errorSchema(list)]));
}
