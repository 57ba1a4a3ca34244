import Fastify, { type FastifyInstance, type FastifyServerOptions, type LogLevel } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { trustProxy, type ApiConfig } from '@smsgw/config';
import type { Resolver } from '@smsgw/core';
import { auth } from './plugins/auth.ts';
import { docs } from './plugins/docs.ts';
import { clientErrorHandler, errorHandler, frameworkErrors } from './plugins/errors.ts';
import { metrics } from './plugins/metrics.ts';
import { rateLimits } from './plugins/rate-limit.ts';
import { resources } from './plugins/resources.ts';
import { closeQuery, lenientValidatorCompiler, validatorCompiler } from './plugins/validation.ts';
import { deviceAuth } from './plugins/device-auth.ts';
import { reportIntake } from './plugins/report-intake.ts';
import { healthIntake } from './plugins/health-intake.ts';
import { wakeups } from './plugins/wakeups.ts';
import { userEvents } from './plugins/user-events.ts';
import { shutdown } from './plugins/shutdown.ts';
import { serializeRequest } from './plugins/request-log.ts';
import { DEVICE_PROTOCOL_ROUTES } from './routes/device-protocols/index.ts';
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
import eventRoutes from './routes/events.ts';
import smsStatsRoutes from './routes/sms/stats.ts';
import settingsRoutes from './routes/settings.ts';
import smsGateAccountRoutes from './routes/sms-gate-account.ts';
import twilioAccountRoutes from './routes/twilio-account.ts';
import optOutRoutes from './routes/opt-outs.ts';
import { COMPAT_APIS } from './routes/compat/index.ts';
import { consoleApp } from './plugins/console.ts';

type LoggerOptions = Exclude<NonNullable<FastifyServerOptions['logger']>, boolean>;

export interface BuildAppOptions {
  config: ApiConfig;
  /** Options over the defaults (LOG_LEVEL, credentials redacted), e.g. a `stream`; false: no log. */
  logger?: false | LoggerOptions;
  /** Resolves webhook hosts at registration; tests pass a stub (default: the system's DNS). */
  webhookResolver?: Resolver;
}

/** Bytes of a send request with MAX_RECIPIENTS numbers of up to 16 characters each, with room to spare. */
function bodyLimit(config: ApiConfig): number {
  return Math.max(1024 * 1024, config.MAX_RECIPIENTS * 24 + 64 * 1024);
}

/**
 * The log level of the device protocols' routes: their request lines appear at debug and trace;
 * at info they are left out (warnings and errors still show); stricter levels apply as they are.
 */
export function deviceLogLevel(level: LogLevel): LogLevel {
  return level === 'info' ? 'warn' : level;
}

/** Milliseconds between Node's checks of requests still arriving: a tenth of the timeout, between 0.1 and 30 s. */
function timeoutCheckInterval(timeoutMs: number): number {
  return Math.min(30_000, Math.max(100, Math.round(timeoutMs / 10)));
}

/**
 * The whole API as one Fastify instance, ready to `listen` or to `inject` in tests. Plugins load
 * in order: error handling, connections, auth, docs, rate limits, then the routes.
 */
export async function buildApp({ config, logger, webhookResolver }: BuildAppOptions): Promise<FastifyInstance> {
  const requestTimeout = config.REQUEST_TIMEOUT_SECONDS * 1000;
  const app = Fastify({
    logger:
      logger === false
        ? false
        : {
            level: config.LOG_LEVEL,
            redact: ['req.headers.authorization', 'req.headers["x-api-key"]', 'req.headers.cookie'],
            serializers: { req: serializeRequest },
            ...logger,
          },
    bodyLimit: bodyLimit(config),
    // Node's timeout for receiving a whole request: it ends once the body has arrived, so a long
    // poll or an event stream runs as long as it likes. No idle `connectionTimeout`, which would cut
    // them. The headers' timeout is the same: Node swaps the two when the headers' one is longer,
    // and its default (60 s) would then bound the body instead.
    requestTimeout,
    http: { headersTimeout: requestTimeout, connectionsCheckingInterval: timeoutCheckInterval(requestTimeout) },
    clientErrorHandler,
    frameworkErrors: frameworkErrors(COMPAT_APIS),
    return503OnClosing: true,
    trustProxy: trustProxy(config),
    // The SMS Gate app joins its base URL and paths with a slash: a base typed with a trailing slash gives `//`.
    routerOptions: { ignoreDuplicateSlashes: true },
  })
    .setValidatorCompiler(validatorCompiler)
    .withTypeProvider<TypeBoxTypeProvider>();
  // Bodies are JSON (contact imports add CSV): without this, a text/plain body would reach a JSON
  // schema as a string and be refused as a wrong shape instead of 415.
  app.removeContentTypeParser('text/plain');

  await app.register(errorHandler);
  await app.register(shutdown);
  await app.register(metrics);
  await app.register(resources, { config, ...(webhookResolver && { webhookResolver }) });
  await app.register(auth);
  await app.register(deviceAuth);
  await app.register(reportIntake);
  await app.register(healthIntake);
  await app.register(wakeups);
  await app.register(userEvents);
  await app.register(docs);
  await app.register(rateLimits);

  await app.register(health);
  // The user API: every read refuses a query parameter it does not name (closeQuery).
  await app.register(async (api) => {
    api.addHook('onRoute', closeQuery);
    await api.register(authRoutes);
    await api.register(apiKeyRoutes);
    await api.register(deviceRoutes);
    await api.register(quotaRoutes);
    await api.register(contactRoutes);
    await api.register(groupRoutes);
    await api.register(templateRoutes);
    await api.register(webhookRoutes);
    await api.register(smsRoutes);
    await api.register(receivedRoutes);
    await api.register(devicePairingRoutes);
    await api.register(settingsRoutes);
    await api.register(twilioAccountRoutes);
    await api.register(smsGateAccountRoutes);
    await api.register(optOutRoutes);
    await api.register(eventRoutes);
    await api.register(smsStatsRoutes);
  });
  // Other gateways' client APIs (docs/compatibility.md), each with its own credentials and error shape.
  for (const api of COMPAT_APIS) await app.register(api.routes, { prefix: api.prefix });
  await app.register(consoleApp);
  // The device protocols' schemas are read leniently: a phone is never refused for a query
  // parameter it adds or for U+0000 in what it reports (see lenientValidatorCompiler).
  // Their requests (polls, keepalive heartbeats, pulls) are the bulk of an idle gateway's traffic:
  // logged only at debug (deviceLogLevel), so that LOG_LEVEL=info shows what people do.
  await app.register(async (devices) => {
    devices.setValidatorCompiler(lenientValidatorCompiler);
    for (const routes of Object.values(DEVICE_PROTOCOL_ROUTES)) await devices.register(routes, { logLevel: deviceLogLevel(config.LOG_LEVEL) });
  });

  await app.ready();
  return app;
}
