import { Type, type TSchema } from 'typebox';
import { AppError, decodeCursor, encodeCursor, type ListPosition } from '@smsgw/core';
import { TOTAL_CAP } from '@smsgw/db';

/** `{error, message}`: the body of every error (spec section 7), `Error` in the OpenAPI document. */
export const ERROR_BODY_OPTIONS = { $id: 'Error', description: 'An error.' };
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Error code: each operation lists the codes it can return (docs/http-api.md has the catalogue).' }),
    message: Type.String({ description: 'What went wrong, in words.' }),
  },
  ERROR_BODY_OPTIONS,
);

/** Response schemas for the errors every authenticated route can return (403: a scoped token without the route's scope). */
export const authErrors = {
  401: ErrorBody,
  403: ErrorBody,
  429: ErrorBody,
};

export const IdParams = Type.Object({ id: Type.String() }, { additionalProperties: false });

export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

/** How many to skip: at most 2^31 - 1, so that no value overflows the database's offset. */
export const Offset = Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 });

/** `limit` 1..100 (default 20) and `offset` >= 0, as for messages. */
export const Pagination = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Offset,
});

export function page<T extends object>(data: T[], total: number, query: { limit: number; offset: number }) {
  return { data, total, limit: query.limit, offset: query.offset };
}

/** One page of a list, named `<name>` in the OpenAPI document (e.g. `ContactPage`). */
export function PageOf<T extends TSchema>(item: T, name: string) {
  const example = (item as { examples?: unknown[] }).examples;
  return Type.Object(
    {
      data: Type.Array(item),
      total: Type.Integer({ description: 'How many match, over all pages.' }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    },
    {
      $id: name,
      description: `One page of ${name.replace(/Page$/, '')} records.`,
      ...(Array.isArray(example) && { examples: [{ data: [example[0]], total: 1, limit: 20, offset: 0 }] }),
    },
  );
}

/**
 * Paging of the lists that grow with history (messages, incoming SMS): `cursor` next to `limit` and
 * `offset` (docs/http-api.md, "Paging").
 */
export const CursorPagination = Type.Object({
  ...Pagination.properties,
  cursor: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The `next_cursor` of the previous page: the page after it, however many rows arrived since. Not together with offset.',
    }),
  ),
});

/** The position `cursor` names, or none; a cursor this API did not make, or one given with an offset, is the caller's mistake. */
export function cursorOf(query: { cursor?: string; offset: number }): ListPosition | undefined {
  if (query.cursor === undefined) return undefined;
  if (query.offset > 0) throw new AppError('invalid_request', 'Give cursor or offset, not both.');
  const position = decodeCursor(query.cursor);
  if (!position) throw new AppError('invalid_request', 'cursor is not a next_cursor of this list.');
  return position;
}

/** One page of a list that grows with history, named `<name>` in the OpenAPI document. */
export function CursorPageOf<T extends TSchema>(item: T, name: string) {
  const example = (item as { examples?: unknown[] }).examples;
  return Type.Object(
    {
      data: Type.Array(item),
      total: Type.Integer({ description: `How many match, over all pages: exact while total_exact, else a lower bound (${TOTAL_CAP.toLocaleString('en')}).` }),
      total_exact: Type.Boolean({
        description: `false when more match than are counted (${TOTAL_CAP.toLocaleString('en')}): count no further, page on with next_cursor.`,
      }),
      has_more: Type.Boolean({ description: 'Whether rows follow this page.' }),
      next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last page.' }),
      limit: Type.Integer(),
      offset: Type.Integer(),
    },
    {
      $id: name,
      description: `One page of ${name.replace(/Page$/, '')} records, newest first.`,
      ...(Array.isArray(example) && {
        examples: [{ data: [example[0]], total: 1, total_exact: true, has_more: false, next_cursor: null, limit: 20, offset: 0 }],
      }),
    },
  );
}

export function cursorPage<T extends object>(
  data: T[],
  result: { total: number; totalExact: boolean; nextCursor: ListPosition | null },
  query: { limit: number; offset: number },
) {
  return {
    data,
    total: result.total,
    total_exact: result.totalExact,
    has_more: result.nextCursor !== null,
    next_cursor: result.nextCursor && encodeCursor(result.nextCursor),
    limit: query.limit,
    offset: query.offset,
  };
}
