import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, availabilityWindows, healthContext, isUuid, toDeviceRecord, type BudgetCounts } from '@smsgw/core';
import { budgetCounts, createDevice, deleteDevice, findDevice, listDevices, updateDevice, type DeviceRow } from '@smsgw/db';
import { authErrors, IdParams } from '../schemas/common.ts';
import { DeviceRecord, newBudgets, newRateLimit, SimBudgetsPatch } from '../schemas/device-record.ts';
import { errors } from '../schemas/errors.ts';

const Name = Type.String({ minLength: 1, maxLength: 100 });


/** `/api/v1/devices`: the user's sending devices. The device token is shown once, on creation. */
const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  // Records with their budgets' usage: one statement for all of them.
  async function toRecords(devices: DeviceRow[]) {
    const now = new Date();
    const counts = await budgetCounts(app.sql, devices.map((d) => d.id), now);
    return devices.map((device) => toDeviceRecord(device, availabilityWindows(app.config, now), {
      ...healthContext(app.config, now),
      budgets: { counts: counts.get(device.id) ?? new Map<number, BudgetCounts>(), now },
    }));
  }
  const toRecord = async (device: DeviceRow) => (await toRecords([device]))[0]!;

  async function ownDevice(userId: string, id: string): Promise<DeviceRow> {
    const device = isUuid(id) ? await findDevice(app.db, { userId, id }) : null;
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
      const { token, device } = await createDevice(app.db, { userId: request.auth.user.id, name: request.body.name });
      return reply.status(201).send({ ...(await toRecord(device)), token });
    },
  );

  app.get(
    '/api/v1/devices',
    { schema: { tags: ['devices'], summary: 'List devices', response: { 200: Type.Object({ data: Type.Array(DeviceRecord) }, { $id: 'DeviceList', description: 'All your devices.' }), ...authErrors } } },
    async (request) => ({ data: await toRecords(await listDevices(app.db, request.auth.user.id)) }),
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
        summary: 'Rename, enable or disable a device, or set its rate limits and carrier budgets',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            enabled: Type.Optional(Type.Boolean()),
            rate_limit_per_minute: newRateLimit('minute'),
            rate_limit_per_hour: newRateLimit('hour'),
            rate_limit_per_day: newRateLimit('day'),
            ...newBudgets(),
            sims: Type.Optional(SimBudgetsPatch),
          },
          {
            additionalProperties: false, minProperties: 1,
            examples: [{ rate_limit_per_minute: 6 }, { segments_per_hour: 100, unique_recipients_per_month: 200, sims: [{ sim_number: 2, segments_per_day: 100 }] }],
          },
        ),
        response: { 200: DeviceRecord, ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      await ownDevice(request.auth.user.id, id);
      const { name, enabled, rate_limit_per_minute, rate_limit_per_hour, rate_limit_per_day, sims } = request.body;
      const { segments_per_hour, segments_per_day, segments_per_month, unique_recipients_per_month } = request.body;
      const device = await updateDevice(app.db, {
        userId: request.auth.user.id,
        id,
        name,
        enabled,
        rateLimitPerMinute: rate_limit_per_minute,
        rateLimitPerHour: rate_limit_per_hour,
        rateLimitPerDay: rate_limit_per_day,
        budgets: {
          segmentsPerHour: segments_per_hour, segmentsPerDay: segments_per_day, segmentsPerMonth: segments_per_month,
          uniqueRecipientsPerMonth: unique_recipients_per_month,
        },
        sims,
      });
      if (!device) throw new AppError('not_found', 'Device not found');
      return toRecord(device);
    },
  );

  app.delete(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Delete a device', params: IdParams, response: { 204: Type.Null(), ...errors('not_found'), ...authErrors } } },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteDevice(app.db, { userId: request.auth.user.id, id }))) {
        throw new AppError('not_found', 'Device not found');
      }
      return reply.status(204).send(null);
    },
  );
};
export default deviceRoutes;
