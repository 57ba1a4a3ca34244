import { Type, type TSchema } from 'typebox';

/** `{error, message}`: the body of every error (spec section 7). */
export const ErrorBody = Type.Object({
  error: Type.String({ description: 'Error code, from the catalogue in the README.' }),
  message: Type.String(),
});

/** Response schemas for the errors every authenticated route can return. */
export const authErrors = {
  401: ErrorBody,
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

export const PageOf = <T extends TSchema>(item: T) =>
  Type.Object({ data: Type.Array(item), total: Type.Integer(), limit: Type.Integer(), offset: Type.Integer() });
