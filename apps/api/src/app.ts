import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { trustProxy, type ApiConfig } from '@smsgw/config';
import type { Resolver } from '@smsgw/core';
import { auth } from './plugins/auth.ts';
import { docs } from './plugins/docs.ts';
import { errorHandler } from './plugins/errors.ts';
import { metrics } from './plugins/metrics.ts';
import { rateLimits } from './plugins/rate-limit.ts';
import { resources } from './plugins/resources.ts';
import { validatorCompiler } from './plugins/validation.ts';
import { deviceAuth } from './plugins/device-auth.ts';
import { wakeups } from './plugins/wakeups.ts';
import deviceProtocolRoutes from './routes/device/index.ts';
import mobileRoutes from './routes/mobile/index.ts';
import contactRoutes from './routes/contacts.ts';
import groupRoutes from './routes/groups.ts';
import templateRoutes from './routes/templates.ts';
import webhookRoutes from './routes/webhooks.ts';
import apiKeyRoutes from './routes/api-keys.ts';
import authRoutes from './routes/auth.ts';
import deviceRoutes from './routes/devices.ts';
import health from './routes/health.ts';
import quotaRoutes from './routes/quota.ts';
import smsRoutes from './routes/sms/index.ts';
import receivedRoutes from './routes/sms/received.ts';
import devicePairingRoutes from './routes/device-pairings.ts';

export interface BuildAppOptions {
  config: ApiConfig;
  logger?: FastifyServerOptions['logger'];
  /** Resolves webhook hosts at registration; tests pass a stub (default: the system's DNS). */
  webhookResolver?: Resolver;
}

/** Bytes of a send request with MAX_RECIPIENTS numbers of up to 16 characters each, with room to spare. */
function bodyLimit(config: ApiConfig): number {
  return Math.max(1024 * 1024, config.MAX_RECIPIENTS * 24 + 64 * 1024);
}

/**
 * The whole API as one Fastify instance, ready to `listen` or to `inject` in tests. Plugins load
 * in order: error handling, connections, auth, docs, rate limits, then the routes.
 */
export async function buildApp({ config, logger, webhookResolver }: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: logger ?? {
      level: config.LOG_LEVEL,
      redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
    },
    bodyLimit: bodyLimit(config),
    return503OnClosing: true,
    trustProxy: trustProxy(config),
    // The SMS Gate app joins its base URL and paths with a slash: a base typed with a trailing slash gives `//`.
    routerOptions: { ignoreDuplicateSlashes: true },
  })
    .setValidatorCompiler(validatorCompiler)
    .withTypeProvider<TypeBoxTypeProvider>();

  await app.register(errorHandler);
  await app.register(metrics);
  await app.register(resources, { config, ...(webhookResolver && { webhookResolver }) });
  await app.register(auth);
  await app.register(deviceAuth);
  await app.register(wakeups);
  await app.register(docs);
  await app.register(rateLimits);

  await app.register(health);
  await app.register(authRoutes);
  await app.register(apiKeyRoutes);
  await app.register(deviceRoutes);
  await app.register(quotaRoutes);
  await app.register(contactRoutes);
  await app.register(groupRoutes);
  await app.register(templateRoutes);
  await app.register(webhookRoutes);
  await app.register(smsRoutes);
  await app.register(receivedRoutes);
  await app.register(devicePairingRoutes);
  await app.register(deviceProtocolRoutes);
  await app.register(mobileRoutes);

  await app.ready();
  return app;
}
