import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { convertText } from '@smsgw/config';

/**
 * Validates with TypeBox's compiler. Bodies are checked as sent: no type coercion, no defaults, no
 * removal of unknown fields. Query strings, path parameters and headers arrive as text, so their
 * defaults are applied and their values converted to the schema's types first (numbers only from
 * plain decimal text).
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (value: unknown) => {
    const input = httpPart === 'body' ? value : convertText(schema, Value.Default(schema, value));
    if (check.Check(input)) return { value: input };
    return { error: check.Errors(input) as unknown as FastifySchemaValidationError[] };
  };
};
