import { Type } from 'typebox';

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
