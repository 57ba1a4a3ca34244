import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

const Status = Type.Object(
  { status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) },
  { $id: 'HealthStatus', description: 'ok, or what is down.' },
);

// A dependency that has not answered a readiness check within this time counts as down.
const CHECK_TIMEOUT_MS = 1000;

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

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
      const check = (name: string) => (error: Error) => {
        request.log.warn({ err: error, dependency: name }, 'readiness check failed');
        return 'down';
      };
      const [postgres, redis] = await Promise.all([
        within(app.sql.query('SELECT 1'), CHECK_TIMEOUT_MS).then(() => 'ok', check('postgres')),
        within(app.redis.ping(), CHECK_TIMEOUT_MS).then(() => 'ok', check('redis')),
      ]);
      const ready = postgres === 'ok' && redis === 'ok';
      return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks: { postgres, redis } });
    },
  );
};
export default health;
