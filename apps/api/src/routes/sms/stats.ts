import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, MESSAGE_STATES, MESSAGE_STATUSES, isUuid, statusOf } from '@smsgw/core';
import { findMessage, listMessageEvents, messageStats } from '@smsgw/db';
import { ErrorBody, IdParams, Timestamp, authErrors } from '../../schemas/common.ts';

const HOUR_MS = 3_600_000;

const StatusCounts = Type.Object(
  Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, Type.Integer({ minimum: 0 })])) as Record<
    (typeof MESSAGE_STATUSES)[number],
    ReturnType<typeof Type.Integer>
  >,
  { description: 'Messages by their current status.' },
);
const StatsQuery = Type.Object({
  hours: Type.Integer({ minimum: 1, maximum: 168, default: 24, description: 'How many hours back, the current one included.' }),
});
const StatsResponse = Type.Object({
  since: Type.String({ format: 'date-time', description: 'Start of the first hour counted.' }),
  hours: Type.Array(Type.Object({ hour: Timestamp, counts: StatusCounts }), { description: 'One entry per hour, oldest first, zeros included.' }),
  devices: Type.Array(Type.Object({ device_id: Type.String({ format: 'uuid' }), messages: Type.Integer() }), {
    description: 'Messages of the same hours per device that handles them (or was named at send).',
  }),
});
const HistoryResponse = Type.Object({
  data: Type.Array(
    Type.Object({
      state: Type.Enum([...MESSAGE_STATES]),
      status: Type.Enum([...MESSAGE_STATUSES]),
      at: Timestamp,
      device_id: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
      detail: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed or was handed back, when known.' }),
    }),
    { description: 'Oldest first; the first entry is the message’s creation (pending).' },
  ),
});

/** Aggregates for dashboards (the console's overview) and a message's history of states. */
const smsStatsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  app.get(
    '/api/v1/sms/stats',
    {
      schema: {
        tags: ['sms'],
        summary: 'Messages of the last hours by status, per hour, and per device',
        description: 'Counts the messages created in each of the last `hours` hours (UTC hours, the current one included) by their current status.',
        querystring: StatsQuery,
        response: { 200: StatsResponse, 400: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const current = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
      const since = new Date(current - (request.query.hours - 1) * HOUR_MS);
      const { byHour, byDevice } = await messageStats(app.sql, { userId: request.auth.user.id, since });
      const hours = Array.from({ length: request.query.hours }, (_, i) => ({
        hour: new Date(since.getTime() + i * HOUR_MS).toISOString(),
        counts: Object.fromEntries(MESSAGE_STATUSES.map((s) => [s, 0])) as Record<(typeof MESSAGE_STATUSES)[number], number>,
      }));
      for (const { hour, state, count } of byHour) {
        const entry = hours[Math.round((hour.getTime() - since.getTime()) / HOUR_MS)];
        if (entry) entry.counts[statusOf(state)] += count;
      }
      return { since: since.toISOString(), hours, devices: byDevice.map((d) => ({ device_id: d.deviceId, messages: d.count })) };
    },
  );

  app.get(
    '/api/v1/sms/:id/history',
    {
      schema: {
        tags: ['sms'],
        summary: 'The states a message went through, with their times',
        params: IdParams,
        response: { 200: HistoryResponse, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      const message = isUuid(id) ? await findMessage(app.sql, { userId: request.auth.user.id, id }) : null;
      if (!message) throw new AppError('not_found', 'Message not found');
      const history = [{ state: 'pending' as const, at: message.createdAt, deviceId: null, detail: null }, ...(await listMessageEvents(app.sql, id))];
      return {
        data: history.map((h) => ({ state: h.state, status: statusOf(h.state), at: h.at.toISOString(), device_id: h.deviceId, detail: h.detail })),
      };
    },
  );
};
export default smsStatsRoutes;
