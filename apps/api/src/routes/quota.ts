import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { quotaPeriod } from '@smsgw/core';
import { quotaUsed } from '@smsgw/db';
import { authErrors, Timestamp } from '../schemas/common.ts';

const Quota = Type.Object({
  period: Type.String({ description: 'Calendar month in UTC, YYYY-MM.' }),
  limit: Type.Integer(),
  used: Type.Integer(),
  remaining: Type.Integer(),
  resets_at: Timestamp,
});

/** `GET /api/v1/quota` (alias `GET /api/plans/quota`): this month's message quota. */
const quotaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  for (const url of ['/api/v1/quota', '/api/plans/quota']) {
    app.get(url, { schema: { tags: ['quota'], summary: 'Monthly quota', response: { 200: Quota, ...authErrors } } }, async (request) => {
      const { user } = request.auth;
      const period = quotaPeriod(new Date());
      const limit = user.monthlyQuota ?? app.config.MONTHLY_QUOTA_DEFAULT;
      const used = await quotaUsed(app.db, { userId: user.id, period: period.start });
      return { period: period.label, limit, used, remaining: Math.max(0, limit - used), resets_at: period.resetsAt.toISOString() };
    });
  }
};
export default quotaRoutes;
