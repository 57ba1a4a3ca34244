import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext } from '../../../plugins/auth.ts';

/**
 * SMS Gate's credentials (upstream `middlewares/userauth`): `Basic base64(username:password)` with
 * an smsgw API key as the password and the key owner's user name or user id as the username (split
 * at the first colon, the scheme name in any case); or `Bearer` with an API key or JWT, as on the
 * rest of smsgw. A refusal is 401 (counted against the client address like any other, 429 past the limit).
 */
export function smsGateAuthentication(app: FastifyInstance) {
  return async (request: FastifyRequest): Promise<void> => {
    const header = request.headers.authorization ?? '';
    const basic = /^basic\s+(\S*)\s*$/i.exec(header);
    if (!basic) return app.authenticate(request);
    request.auth = await app.verifyCredential(request, () => fromBasic(app, basic[1]!));
  };
}

async function fromBasic(app: FastifyInstance, encoded: string): Promise<AuthContext | null> {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  // Node decodes leniently; a value that does not round-trip was not base64 (upstream: 401).
  if (Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') !== encoded.replace(/=+$/, '')) return null;
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  const [username, password] = [decoded.slice(0, colon), decoded.slice(colon + 1)];
  if (!password) return null;
  const auth = await app.resolveCredential(password);
  const owner = auth && (username === auth.user.name || username.toLowerCase() === auth.user.id);
  return owner ? auth : null;
}
