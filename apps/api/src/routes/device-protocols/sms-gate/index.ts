import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { MoreWaiting, OfferedMessages } from '../../../services/device-core.ts';
import { EventStreams } from '../../../services/event-stream.ts';
import type { MobileContext } from './context.ts';
import configurationRoutes from './configuration.ts';
import inboundRoutes from './inbound.ts';
import messageRoutes from './messages.ts';
import registrationRoutes from './registration.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request body as received: incoming-SMS webhooks are signed over these bytes. */
    rawBody: Buffer | null;
  }
}

/** The base of the mobile API; the app's own docs tell self-hosters to type the second. */
export const MOBILE_PREFIXES = ['/mobile/v1', '/api/mobile/v1'] as const;

/**
 * The SMS Gate app's mobile API (real-devices.md §2): a thin adapter that translates the app's
 * wire shapes and calls the device core, the same at both prefixes. Encapsulated: its JSON parser
 * keeps the raw body and its event streams are its own.
 */
const mobileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.decorateRequest('rawBody', null);
  app.decorateRequest('pairingSecret', '');
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    parseJson(request, (body as Buffer).toString('utf8'), done);
  });

  const context: MobileContext = { streams: new EventStreams(app), moreWaiting: new MoreWaiting(app), offered: new OfferedMessages() };
  app.addHook('preClose', async () => {
    context.streams.closeAll();
    context.moreWaiting.close();
  });
  for (const prefix of MOBILE_PREFIXES) {
    await app.register(async (api: FastifyInstance) => mobileApi(api, { context, documented: prefix === MOBILE_PREFIXES[0] }), { prefix });
  }
};

async function mobileApi(app: FastifyInstance, options: { context: MobileContext; documented: boolean }): Promise<void> {
  if (!options.documented) {
    app.addHook('onRoute', (route) => {
      route.schema = { ...route.schema, hide: true };
    });
  }
  await app.register(registrationRoutes);
  await app.register(messageRoutes, options.context);
  await app.register(configurationRoutes, options.context);
  await app.register(inboundRoutes);
}

export default mobileRoutes;
