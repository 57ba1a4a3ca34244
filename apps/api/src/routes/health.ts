import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

const Status = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) });

/** `/health`: the process is up. `/ready`: Postgres and Redis answer. */
const health: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', { schema: { tags: ['health'], response: { 200: Status } } }, async () => ({ status: 'ok' }));

  app.get('/ready', { schema: { tags: ['health'], response: { 200: Status, 503: Status } } }, async (request, reply) => {
    // Details of a failure go to the log, not to the (unauthenticated) caller.
    const check = (name: string) => (error: Error) => {
      request.log.warn({ err: error, dependency: name }, 'readiness check failed');
      return 'down';
    };
    const [postgres, redis] = await Promise.all([
      app.db.$queryRaw`SELECT 1`.then(() => 'ok', check('postgres')),
      app.redis.ping().then(() => 'ok', check('redis')),
    ]);
    const ready = postgres === 'ok' && redis === 'ok';
    return reply.status(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unavailable', checks: { postgres, redis } });
  });
};
export default health;
