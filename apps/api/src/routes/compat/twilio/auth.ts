import type { FastifyInstance, FastifyRequest } from 'fastify';
import { twilioAccount, userOfTwilioToken } from '@smsgw/db';
import type { AuthContext } from '../../../plugins/auth.ts';
import { TwilioError } from './errors.ts';

/**
 * Twilio's credentials: `Basic base64(AccountSid:AuthToken)`, or the Account SID with an smsgw API
 * key as the password (401, 20003 otherwise, counted against the client address like any refusal).
 * The Account SID in the path must be the caller's own: another one is 404 (20404), as Twilio
 * answers for an account the credentials cannot see.
 */
export function twilioAuthentication(app: FastifyInstance) {
  return async (request: FastifyRequest): Promise<void> => {
    const basic = /^basic\s+(\S*)\s*$/i.exec(request.headers.authorization ?? '');
    request.auth = await app.verifyCredential(request, async () => (basic ? fromBasic(app, basic[1]!) : null));
    const { AccountSid } = request.params as { AccountSid?: string };
    const { accountSid } = await twilioAccount(app.sql, request.auth.user.id);
    if (AccountSid !== accountSid) throw new TwilioError(404, 20404, `The requested resource ${request.url.split('?')[0]} was not found`);
  };
}

async function fromBasic(app: FastifyInstance, encoded: string): Promise<AuthContext | null> {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  // Node decodes leniently; a value that does not round-trip was not base64.
  if (Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return null;
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const [sid, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  if (!password) return null;
  const user = await userOfTwilioToken(app.sql, sid, password);
  if (user) return { user, method: 'api_key', apiKeyId: '' };
  const auth = await app.resolveCredential(password);
  return auth && (await twilioAccount(app.sql, auth.user.id)).accountSid === sid ? auth : null;
}
