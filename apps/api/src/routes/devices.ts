import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AppError,
  DEVICE_PROTOCOLS,
  WebhookTargetError,
  availabilityWindows,
  checkWebhookUrl,
  encodeCursor,
  healthContext,
  isUuid,
  toDeviceRecord,
  type BudgetCounts,
} from '@smsgw/core';
import { budgetCounts, createDevice, deleteDevice, findDevice, pageDevices, updateDevice, type DeviceRow } from '@smsgw/db';
import { publishSettingsUpdated } from '@smsgw/queue';
import { authErrors, cursorOf, IdParams } from '../schemas/common.ts';
import { DeviceList, DeviceListQuery, DeviceRecord, newBudgets, newRateLimit, newTwilioSmsUrl, SimBudgetsPatch } from '../schemas/device-record.ts';
import { errors } from '../schemas/errors.ts';

const Name = Type.String({ minLength: 1, maxLength: 100 });

/** `/api/v1/devices`: the user's sending devices. The device token is shown once, on creation. */
const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  // Records with their budgets' usage: one statement for all of them.
  async function toRecords(devices: DeviceRow[]) {
    const now = new Date();
    const counts = await budgetCounts(
      app.sql,
      devices.map((d) => d.id),
      now,
    );
    return devices.map((device) =>
      toDeviceRecord(device, availabilityWindows(app.config, now), {
        ...healthContext(app.config, now),
        budgets: { counts: counts.get(device.id) ?? new Map<number, BudgetCounts>(), now },
      }),
    );
  }
  const toRecord = async (device: DeviceRow) => (await toRecords([device]))[0]!;

  /** A Twilio incoming-SMS URL is held to the rules of webhook URLs (it is delivered as one). */
  async function checkUrl(url: string | null | undefined, field: string): Promise<void> {
    if (url === null || url === undefined) return;
    try {
      await checkWebhookUrl(url, app.webhookPolicy);
    } catch (error) {
      if (error instanceof WebhookTargetError) throw new AppError('invalid_webhook_url', `${field}: ${error.message}`);
      throw error;
    }
  }

  async function ownDevice(userId: string, id: string): Promise<DeviceRow> {
    const device = isUuid(id) ? await findDevice(app.sql, { userId, id }) : null;
    if (!device) throw new AppError('not_found', 'Device not found');
    return device;
  }

  app.post(
    '/api/v1/devices',
    {
      schema: {
        tags: ['devices'],
        summary: 'Register a device (its token is shown once)',
        body: Type.Object({ name: Name }, { additionalProperties: false, examples: [{ name: 'Office modem' }] }),
        response: {
          201: Type.Intersect([DeviceRecord, Type.Object({ token: Type.String({ description: 'The device token (smsgw_dt_…), shown once.' }) })], {
            $id: 'NewDevice',
            description: 'The device, with its token.',
          }),
          ...errors('invalid_request'),
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { token, device } = await createDevice(app.sql, { userId: request.auth.user.id, name: request.body.name });
      return reply.status(201).send({ ...(await toRecord(device)), token });
    },
  );

  app.get(
    '/api/v1/devices',
    {
      schema: {
        tags: ['devices'],
        summary: 'List devices, oldest first, a page at a time',
        querystring: DeviceListQuery,
        response: { 200: DeviceList, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request, reply) => {
      const { limit, cursor } = request.query;
      const after = cursorOf({ cursor, offset: 0 });
      const { rows, next } = await pageDevices(app.sql, { userId: request.auth.user.id, limit, after });
      const nextCursor = next && encodeCursor(next);
      if (nextCursor) reply.header('link', `</api/v1/devices?limit=${limit}&cursor=${nextCursor}>; rel="next"`);
      return { data: await toRecords(rows), ...(nextCursor && { next_cursor: nextCursor }) };
    },
  );

  app.get(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Get a device', params: IdParams, response: { 200: DeviceRecord, ...errors('not_found'), ...authErrors } } },
    async (request) => await toRecord(await ownDevice(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/devices/:id',
    {
      schema: {
        tags: ['devices'],
        summary: 'Rename, enable or disable a device, or set its rate limits, carrier budgets and Twilio incoming-SMS URLs',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            enabled: Type.Optional(Type.Boolean()),
            rate_limit_per_minute: newRateLimit('minute'),
            rate_limit_per_hour: newRateLimit('hour'),
            rate_limit_per_day: newRateLimit('day'),
            ...newBudgets(),
            twilio_sms_url: newTwilioSmsUrl(),
            sims: Type.Optional(SimBudgetsPatch),
          },
          {
            additionalProperties: false,
            minProperties: 1,
            examples: [
              { rate_limit_per_minute: 6 },
              { segments_per_hour: 100, unique_recipients_per_month: 200, sims: [{ sim_number: 2, segments_per_day: 100 }] },
              { twilio_sms_url: 'https://example.com/sms', sims: [{ sim_number: 2, twilio_sms_url: 'https://example.com/sms-sim2' }] },
            ],
          },
        ),
        response: { 200: DeviceRecord, ...errors('invalid_request', 'invalid_webhook_url', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      await ownDevice(request.auth.user.id, id);
      const { name, enabled, rate_limit_per_minute, rate_limit_per_hour, rate_limit_per_day, twilio_sms_url, sims } = request.body;
      await checkUrl(twilio_sms_url, 'twilio_sms_url');
      for (const [i, sim] of (sims ?? []).entries()) await checkUrl(sim.twilio_sms_url, `sims[${i}].twilio_sms_url`);
      const { segments_per_hour, segments_per_day, segments_per_month, unique_recipients_per_month } = request.body;
      const device = await updateDevice(app.sql, {
        userId: request.auth.user.id,
        id,
        name,
        enabled,
        rateLimitPerMinute: rate_limit_per_minute,
        rateLimitPerHour: rate_limit_per_hour,
        rateLimitPerDay: rate_limit_per_day,
        twilioSmsUrl: twilio_sms_url,
        budgets: {
          segmentsPerHour: segments_per_hour,
          segmentsPerDay: segments_per_day,
          segmentsPerMonth: segments_per_month,
          uniqueRecipientsPerMonth: unique_recipients_per_month,
        },
        sims,
      });
      if (!device) throw new AppError('not_found', 'Device not found');
      // A phone that paces itself by its rate limit (its settings, as an SMS Gate phone) fetches them again when told.
      const paced = [rate_limit_per_minute, rate_limit_per_hour, rate_limit_per_day].some((limit) => limit !== undefined);
      if (paced && DEVICE_PROTOCOLS[device.protocol].pacesFromSettings) {
        await publishSettingsUpdated(app.redis, app.config.QUEUE_PREFIX, [id]).catch((error: unknown) =>
          app.incidents.report('telling a phone its settings changed failed', error),
        );
      }
      return toRecord(device);
    },
  );

  app.delete(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Delete a device', params: IdParams, response: { 204: Type.Null(), ...errors('not_found'), ...authErrors } } },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteDevice(app.sql, { userId: request.auth.user.id, id }))) {
        throw new AppError('not_found', 'Device not found');
      }
      return reply.status(204).send(null);
    },
  );
};
export default deviceRoutes;
