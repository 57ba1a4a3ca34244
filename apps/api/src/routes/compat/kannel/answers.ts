import { isAppError } from '@smsgw/core';

/**
 * Kannel's answers to `sendsms` (its user guide, "SMS Push reply codes", and smsbox's own texts):
 * a status and one line of text/html. Kannel clients read the status and the leading `0:` or `3:`.
 */
export interface KannelAnswer {
  status: number;
  text: string;
  retryAfterSeconds?: number;
}

export const ACCEPTED: KannelAnswer = { status: 202, text: '0: Accepted for delivery' };
export const QUEUED: KannelAnswer = { status: 202, text: '3: Queued for later delivery' };
export const AUTHORIZATION_FAILED: KannelAnswer = { status: 403, text: 'Authorization failed for sendsms' };
export const NOT_ROUTABLE: KannelAnswer = { status: 403, text: 'Not routable. Do not try again.' };
export const TEMPORAL_FAILURE: KannelAnswer = { status: 503, text: 'Temporal failure, try again later.' };
export const NUMBERS_DENIED: KannelAnswer = {
  status: 400,
  text: 'Number(s) has/have been denied by white/black lists, or allowed/denied rules.',
};

/** A refusal in Kannel's shape: `<What> field misformed, rejected` and the like, always 400 unless given. */
export class KannelRefusal extends Error {
  override name = 'KannelRefusal';
  constructor(readonly answer: KannelAnswer) {
    super(answer.text);
  }
}

export function rejected(text: string, status = 400): KannelRefusal {
  return new KannelRefusal({ status, text });
}

export const misformed = (field: string) => rejected(`${field} field misformed, rejected`);

/**
 * What Kannel answers for an error of smsgw's send path. Kannel has no quota, no opt-outs and no
 * named devices: their refusals keep smsgw's reason in Kannel's one-line form
 * (docs/decisions.md, "Kannel sendsms").
 */
export function answerOf(error: unknown): KannelAnswer {
  if (error instanceof KannelRefusal) return error.answer;
  if (isAppError(error)) {
    if (error.code === 'device_not_found') return NOT_ROUTABLE;
    if (error.code === 'invalid_phone_number') return NUMBERS_DENIED;
    if (error.status === 401) return AUTHORIZATION_FAILED;
    if (error.status === 429 || error.status >= 500) {
      return { ...TEMPORAL_FAILURE, ...(error.retryAfterSeconds !== undefined && { retryAfterSeconds: error.retryAfterSeconds }) };
    }
    return { status: error.status, text: `${error.message.replace(/\.$/, '')}, rejected` };
  }
  const status = (error as { statusCode?: number }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, text: 'Request misformed, rejected' };
  return TEMPORAL_FAILURE;
}
