import { Type } from 'typebox';

/** A whole number, at least 1 unless `minimum` says otherwise. */
export const Integer = (options: { default: number; minimum?: number; maximum?: number; description: string }) => Type.Integer({ minimum: 1, ...options });
