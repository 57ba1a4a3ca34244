import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks.js';

/**
 * The `X-Twilio-Signature` of a form-encoded POST to `url` with `params`, keyed by the account's
 * Auth Token: Twilio's own signer (the twilio library's), so that its `validateRequest` accepts
 * what smsgw sends (status callbacks, incoming SMS).
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string>): string {
  return getExpectedTwilioSignature(authToken, url, params);
}
