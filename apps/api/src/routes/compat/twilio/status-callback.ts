import type { FastifyInstance } from 'fastify';
import { CALLBACK_EVENTS, WebhookTargetError, checkWebhookUrl, type TwilioContext } from '@smsgw/core';
import type { SendInput } from '@smsgw/db';
import { invalid } from './errors.ts';
import type { Account } from './resource.ts';

/**
 * A send's `StatusCallback` as the per-send callback of the webhook engine (format `twilio`, every
 * status event), checked against smsgw's webhook address rules when the send is accepted: 400
 * `21609` otherwise, as Twilio answers a StatusCallback it cannot use.
 */
export async function statusCallbackOf(app: FastifyInstance, url: string | undefined, account: Account, viaService: boolean): Promise<SendInput['callback']> {
  if (url === undefined) return undefined;
  const refused = (why: string) => invalid(21609, `The StatusCallback URL ${url} is not a valid URL${why}.`);
  if (!/^https?:\/\/[^\s]+$/i.test(url)) throw refused('');
  try {
    await checkWebhookUrl(url, app.webhookPolicy);
  } catch (error) {
    if (error instanceof WebhookTargetError) throw refused(`: ${error.message.replace(/\.$/, '')}`);
    throw error;
  }
  const context: TwilioContext = { accountSid: account.accountSid, ...(viaService && { messagingServiceSid: account.messagingServiceSid }) };
  return { url, format: 'twilio', events: [...CALLBACK_EVENTS], context };
}
