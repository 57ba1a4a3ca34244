import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { quotaPeriod } from '@smsgw/core';
import { countDevices, quotaUsed } from '@smsgw/db';
import { authErrors, Timestamp } from '../schemas/common.ts';
import { OPEN_QUERY } from '../plugins/validation.ts';

const Quota = Type.Object(
  {
    period: Type.String({ description: 'Calendar month in UTC, YYYY-MM.' }),
    limit: Type.Integer(),
    used: Type.Integer(),
    remaining: Type.Integer(),
    resets_at: Timestamp,
    // The same figures under the names the Vendel SDK reads (`getQuota()`).
    plan: Type.String({ description: 'Vendel SDK: always `self-hosted`.' }),
    sms_sent_this_month: Type.Integer({ description: 'Vendel SDK: `used`.' }),
    max_sms_per_month: Type.Integer({ description: 'Vendel SDK: `limit`.' }),
    devices_registered: Type.Integer({ description: "Vendel SDK: the user's devices (deleted ones not counted)." }),
    max_devices: Type.Null({ description: 'Vendel SDK: null, smsgw sets no limit on devices.' }),
    reset_date: Timestamp,
  },
  { $id: 'Quota', description: "This month's message quota (with the same figures under the Vendel SDK's names)." },
);

/** `GET /api/v1/quota` (alias `GET /api/plans/quota`): this month's message quota. */
const quotaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  // The Vendel alias keeps the lenience of Vendel's own server; smsgw's route refuses unknown parameters.
  for (const [url, config] of [
    ['/api/v1/quota', {}],
    ['/api/plans/quota', OPEN_QUERY],
  ] as [string, object][]) {
    app.get(url, { config, schema: { tags: ['quota'], summary: 'Monthly quota', response: { 200: Quota, ...authErrors } } }, async (request) => {
      const { user } = request.auth;
      const period = quotaPeriod(new Date());
      const limit = user.monthlyQuota ?? app.config.MONTHLY_QUOTA_DEFAULT;
      const [used, devices] = await Promise.all([quotaUsed(app.sql, { userId: user.id, period: period.start }), countDevices(app.sql, user.id)]);
      const resetsAt = period.resetsAt.toISOString();
      return {
        period: period.label,
        limit,
        used,
        remaining: Math.max(0, limit - used),
        resets_at: resetsAt,
        plan: 'self-hosted',
        sms_sent_this_month: used,
        max_sms_per_month: limit,
        devices_registered: devices,
        max_devices: null,
        reset_date: resetsAt,
      };
    });
  }
};
export default quotaRoutes;
