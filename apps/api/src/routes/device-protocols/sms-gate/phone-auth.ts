import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@smsgw/core';
import { authenticateDevice, markDeviceSeen, PAIRING_TOKEN_PREFIX } from '@smsgw/db';
import { credentialKey } from '../../../plugins/credential-cache.ts';
import type { EventStreams } from '../../../services/event-stream.ts';

/**
 * Authentication of the SMS Gate app: its device token as `Authorization: Bearer` on every call
 * but registration, which carries a pairing secret. An unknown, revoked or native device's token
 * gets 401: it is the only answer that makes the app register again (real-devices.md §2b.1).
 */

const APP_AGENT = /^me\.capcom\.smsgateway\/([0-9A-Za-z.+_-]{1,32})(?:\s|$)/;

/** The app version announced by a REST call's User-Agent (`GET /events` carries OkHttp's own). */
export function appVersionOf(request: FastifyRequest): string | undefined {
  return APP_AGENT.exec(request.headers['user-agent'] ?? '')?.[1];
}

/**
 * onRequest hook: sets `request.device` to the token's SMS Gate device, or answers 401 (429 after
 * too many refusals). A known token costs no statement: its device is kept in the process's
 * credential cache, which Postgres's announcements clear within a second when the token is
 * replaced or the device disabled, deleted or moved (migration 20261127141000). The phone is
 * written seen at most every few seconds per process (`markDeviceSeen` moves the cached
 * device's `lastSeenAt`), and not at all while this process holds its event stream (`streams`),
 * whose keepalives write it seen.
 */
export function phoneAuthentication(app: FastifyInstance, options: { recordVersion: boolean; streams?: Pick<EventStreams, 'holds'> }) {
  return async (request: FastifyRequest): Promise<void> => {
    const device = await app.verifyCredential(request, async () => {
      const token = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
      if (!token) return null;
      const found = await app.credentialCache.get(
        credentialKey('phone', token),
        () => authenticateDevice(app.sql, token),
        (d) => d.userId,
      );
      return found?.protocol === 'sms_gate' ? found : null;
    });
    const appVersion = options.recordVersion ? appVersionOf(request) : undefined;
    // A phone whose event stream this process holds is written seen with the stream's keepalives.
    const seenByStream = options.streams?.holds(device.id) === true && (appVersion === undefined || appVersion === device.appVersion);
    if (!seenByStream) await markDeviceSeen(app.sql, device, new Date(), appVersion === undefined ? {} : { appVersion });
    request.device = device;
  };
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The pairing secret of `POST /device`: an 8-digit code or a `smsgw_pt_` token. */
    pairingSecret: string;
  }
}

/**
 * onRequest hook of `POST /device`: "Sign in by code" sends `Code <digits>`, "Sign up" sends
 * `Bearer <private token>` (a pairing token here) or nothing; anything else is 401.
 */
export async function pairingSecret(request: FastifyRequest): Promise<void> {
  const authorization = request.headers.authorization ?? '';
  const code = /^Code\s+(\d{1,32})\s*$/i.exec(authorization)?.[1];
  const token = /^Bearer\s+(\S{1,200})\s*$/i.exec(authorization)?.[1];
  const secret = code ?? (token?.startsWith(PAIRING_TOKEN_PREFIX) ? token : undefined);
  if (!secret) throw new AppError('unauthorized', 'Register with a pairing code or pairing token of smsgw.');
  request.pairingSecret = secret;
}
