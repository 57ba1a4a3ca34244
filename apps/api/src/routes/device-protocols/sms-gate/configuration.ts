import { createHash } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { publicUrl } from '@smsgw/config';
import { AppError, appVersionAtLeast, cancelsHeldMessages, phonePacing, phoneSettings, pingIntervalSeconds } from '@smsgw/core';
import { deviceRateLimits, pendingPhoneCancels, phoneSecrets, smsGateSettings } from '@smsgw/db';
import type { MobileContext } from './context.ts';
import { phoneAuthentication } from './phone-auth.ts';
import { PhoneWebhook, phoneErrors, Settings } from './wire.ts';

const tags = ['sms-gate'];

/** The first app version with the `system:ping` webhook (its ping module). */
const PING_WEBHOOK_VERSION = '1.16';

/** Every frame carries a `data:` line: OkHttp drops a frame without one (real-devices.md §2b.3). */
const frame = (event: string) => `event: ${event}\ndata: null\n\n`;

/** Asks the phone to cancel a message it holds (v1.67+); it answers with a `Cancelled` snapshot. */
const cancelFrame = (messageId: string) => `event: MessageCancelled\ndata: ${JSON.stringify({ messageId })}\n\n`;

/** The app's keepalive reading: at most 15 s between frames (its own server's period). */
const MAX_KEEPALIVE_SECONDS = 15;

/**
 * What keeps the phone informed: its event stream of wake-ups, and the settings and webhooks it
 * fetches at start, daily and when the stream says they changed.
 */
const configurationRoutes: FastifyPluginAsyncTypebox<MobileContext> = async (app, { streams }) => {
  const { config } = app;

  app.get(
    '/events',
    {
      // The stream's User-Agent is OkHttp's: the app version is recorded from REST calls only.
      onRequest: phoneAuthentication(app, { recordVersion: false }),
      schema: {
        tags,
        summary:
          'Server-sent events: `MessageEnqueued` makes the phone pull (at most one a second), `SettingsUpdated` and `WebhooksUpdated` on connect, `SettingsUpdated` again when its settings change',
        // The stream as its media type; the errors before it opens are JSON like every other.
        response: { 200: { description: 'The event stream.', content: { 'text/event-stream': { schema: Type.String() } } }, ...phoneErrors },
      },
    },
    async (request, reply) => {
      if (!streams.hasRoom(request.device.id)) throw new AppError('rate_limited', 'Too many event streams open for this device.');
      // Only an app that knows `MessageCancelled` gets it (real-devices.md §2b.11); cancels it was not
      // told of (its stream was down) are told again on connect.
      const cancels = cancelsHeldMessages(request.device);
      const untold = cancels ? await pendingPhoneCancels(app.sql, request.device.id) : [];
      // Settings and webhooks again on every connect: the app may have skipped its first fetch while registering.
      streams.serve(request, reply, request.device, {
        greeting: [frame('SettingsUpdated'), frame('WebhooksUpdated'), ...untold.map(cancelFrame)],
        wakeup: frame('MessageEnqueued'),
        ...(cancels && { cancelled: cancelFrame }),
        settingsUpdated: frame('SettingsUpdated'),
        minWakeupIntervalMs: 1000,
        keepalive: ': keepalive\n\n',
        keepaliveMs: Math.min(config.DEVICE_HEARTBEAT_SECONDS, MAX_KEEPALIVE_SECONDS) * 1000,
      });
    },
  );

  const authenticate = phoneAuthentication(app, { recordVersion: true, streams });

  app.get(
    '/settings',
    {
      onRequest: authenticate,
      schema: {
        tags,
        summary:
          'The phone’s settings: event stream only, the key it signs its webhooks with, its ping interval, its rate limit, and what applies of the account’s SMS Gate settings',
        response: { 200: Settings, ...phoneErrors },
      },
    },
    async (request) => {
      const { id, userId, appVersion } = request.device;
      const [{ signingKey }, limits, account] = await Promise.all([
        phoneSecrets(app.sql, id),
        deviceRateLimits(app.sql, [id]),
        smsGateSettings(app.sql, userId),
      ]);
      const rateLimits = limits.get(id);
      const own = {
        signingKey,
        pingSeconds: pingIntervalSeconds(config.DEVICE_OFFLINE_AFTER_SECONDS),
        pacing: rateLimits ? phonePacing(rateLimits) : null,
        appVersion,
      };
      return phoneSettings(account, own) as Static<typeof Settings>;
    },
  );

  app.get(
    '/webhooks',
    {
      onRequest: authenticate,
      schema: {
        tags,
        summary: 'The phone’s webhooks: incoming SMS and its health pings to smsgw',
        response: { 200: Type.Array(PhoneWebhook), ...phoneErrors },
      },
    },
    async (request) => {
      const { id, appVersion } = request.device;
      const { inboundSecret } = await phoneSecrets(app.sql, id);
      const url = `${publicUrl(config)}/mobile/v1/inbound/${id}/${inboundSecret}`;
      // Only events the app knows: it reads an unknown one as null (device-apps-research.md).
      const events = appVersionAtLeast(appVersion, PING_WEBHOOK_VERSION) ? (['sms:received', 'system:ping'] as const) : (['sms:received'] as const);
      return events.map((event) => ({ id: webhookId(id, event), url, event }));
    },
  );
};

/** Stable across calls: each new id shows the owner a notification (real-devices.md §2b.10). */
function webhookId(deviceId: string, event: string): string {
  return `smsgw-${createHash('sha256').update(`${deviceId}/${event}`).digest('base64url').slice(0, 24)}`;
}

export default configurationRoutes;
