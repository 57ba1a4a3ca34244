import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkStores } from '../services/store-checks.ts';

const Status = Type.Object(
  { status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) },
  { $id: 'HealthStatus', description: 'ok, or what is down.' },
);

/**
 * `/health`: the process is up. `/ready`: Postgres and Redis answer, within a second each. Neither
 * is rate limited: probes must be answered whatever the clients do and whatever state Redis is in.
 */
const health: FastifyPluginAsyncTypebox = async (app) => {
  const config = { rateLimit: false } as const;
  app.get('/health', { config, schema: { tags: ['health'], summary: 'Liveness: the process is up', response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/ready',
    { config, schema: { tags: ['health'], summary: 'Readiness: Postgres and Redis answer', response: { 200: Status, 503: Status } } },
    async (request, reply) => {
      // Details of a failure go to the log, not to the (unauthenticated) caller.
      const up = await checkStores(app, (dependency, error) => request.log.warn({ err: error, dependency }, 'readiness check failed'));
      const ready = up.postgres && up.redis;
      const checks = { postgres: up.postgres ? 'ok' : 'down', redis: up.redis ? 'ok' : 'down' };
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks });
    },
  );
};
export default health;
