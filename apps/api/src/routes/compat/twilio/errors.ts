import { Type } from 'typebox';
import type { ErrorBodyShape } from '../../../plugins/errors.ts';

/**
 * Twilio's error answer (`{code, message, more_info, status}`). Where Twilio has a code of its own
 * for the refusal its code is used (docs/compatibility.md lists them); otherwise 20000 + the HTTP
 * status, as Twilio's own 20003, 20404, 20429 and 20500 read.
 */
export class TwilioError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface TwilioErrorBody {
  code: number;
  message: string;
  more_info: string;
  status: number;
}

export const TwilioErrorSchema = Type.Object(
  { code: Type.Integer(), message: Type.String(), more_info: Type.String(), status: Type.Integer() },
  { $id: 'TwilioError', description: "Twilio's error body." },
);

export function twilioErrors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, TwilioErrorSchema]));
}

export function twilioBody(status: number, code: number, message: string): TwilioErrorBody {
  return { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

const CODES: Record<string, number> = {
  invalid_phone_number: 21211,
  rate_limited: 20429,
  unauthorized: 20003,
  not_found: 20404,
};

/** smsgw's own error answer, reshaped as Twilio's. */
export function twilioErrorBody(status: number, body: ErrorBodyShape): TwilioErrorBody {
  if (status === 401) return twilioBody(401, 20003, 'Authenticate');
  return twilioBody(status, (body.error === undefined ? undefined : CODES[body.error]) ?? 20000 + status, body.message);
}

/** A parameter Twilio would refuse, in its words. */
export const invalid = (code: number, message: string) => new TwilioError(400, code, message);
