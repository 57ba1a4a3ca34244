import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SmsGateHealth } from './schemas.ts';

// A dependency that has not answered within this time counts as failed.
const CHECK_TIMEOUT_MS = 1000;

/** `GET /health`, the one route without credentials, in SMS Gate's health shape: 503 with the same body when a check fails. */
const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/health',
    {
      config: { rateLimit: false },
      schema: {
        tags: ['sms-gate-client'],
        summary: "SMS Gate's health: pass when Postgres and Redis answer",
        response: { 200: SmsGateHealth, 503: SmsGateHealth },
      },
    },
    async (request, reply) => {
      const probe = async (name: string, check: () => Promise<unknown>) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)));
        try {
          await Promise.race([check(), timeout]);
          return true;
        } catch (error) {
          request.log.warn({ err: error, dependency: name }, 'health check failed');
          return false;
        } finally {
          clearTimeout(timer);
        }
      };
      const [db, redis] = await Promise.all([probe('postgres', () => app.sql.query('SELECT 1')), probe('redis', () => app.redis.ping())]);
      const check = (description: string, ok: boolean) => ({
        description,
        observedUnit: 'boolean',
        observedValue: ok ? 1 : 0,
        status: ok ? ('pass' as const) : ('fail' as const),
      });
      const pass = db && redis;
      return reply.status(pass ? 200 : 503).send({
        status: pass ? 'pass' : 'fail',
        checks: { 'db:ping': check('Postgres answers', db), 'redis:ping': check('Redis answers', redis) },
      });
    },
  );
};
export default healthRoutes;
