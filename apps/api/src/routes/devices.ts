import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, MAX_RATE_LIMIT, availabilityWindows, isUuid, toDeviceRecord } from '@smsgw/core';
import { createDevice, deleteDevice, findDevice, listDevices, updateDevice, type DeviceRow } from '@smsgw/db';
import { authErrors, IdParams, NullableTimestamp, Timestamp } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

/** Pacing (docs/devices.md, "Pacing"): the most messages handed to the device in any minute, hour and day. */
const rateLimit = (window: string, value = Type.Integer()) =>
  Type.Union([value, Type.Null()], {
    description: `At most this many messages are handed to the device in any ${window} (null: no limit). Round-robin gives the excess to the user's other devices; messages named for this device wait.`,
  });
const newRateLimit = (window: string) => Type.Optional(rateLimit(window, Type.Integer({ minimum: 1, maximum: MAX_RATE_LIMIT })));

const DeviceRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  protocol: Type.Enum(['native', 'sms_gate'], { description: '`native`: the device protocol (modem agent, simulator); `sms_gate`: a phone running the SMS Gate app.' }),
  available: Type.Boolean({ description: 'Enabled and connected: it holds an event stream (or closed it within the grace), or it made a request within DEVICE_AVAILABLE_SECONDS (docs/devices.md).' }),
  connection: Type.Union([Type.Literal('stream'), Type.Literal('requests'), Type.Null()], {
    description: 'How the device is connected now: an event stream, only requests (polling), or not at all.',
  }),
  last_seen_at: NullableTimestamp,
  app_version: Type.Union([Type.String(), Type.Null()], { description: 'SMS Gate app version, from its requests.' }),
  sim_cards: Type.Union([Type.Array(Type.Unknown()), Type.Null()], { description: 'SIM cards the SMS Gate app reported (redacted by the app).' }),
  warnings: Type.Array(Type.String(), { description: 'What keeps the device from working well, in words.' }),
  rate_limit_per_minute: rateLimit('minute'),
  rate_limit_per_hour: rateLimit('hour'),
  rate_limit_per_day: rateLimit('day'),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { $id: 'Device', description: 'A phone or modem that sends your messages.' });
const Name = Type.String({ minLength: 1, maxLength: 100 });


/** `/api/v1/devices`: the user's sending devices. The device token is shown once, on creation. */
const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  const toRecord = (device: DeviceRow) => toDeviceRecord(device, availabilityWindows(app.config, new Date()));

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
      return reply.status(201).send({ ...toRecord(device), token });
    },
  );

  app.get(
    '/api/v1/devices',
    { schema: { tags: ['devices'], summary: 'List devices', response: { 200: Type.Object({ data: Type.Array(DeviceRecord) }, { $id: 'DeviceList', description: 'All your devices.' }), ...authErrors } } },
    async (request) => ({ data: (await listDevices(app.db, request.auth.user.id)).map(toRecord) }),
  );

  app.get(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Get a device', params: IdParams, response: { 200: DeviceRecord, ...errors('not_found'), ...authErrors } } },
    async (request) => toRecord(await ownDevice(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/devices/:id',
    {
      schema: {
        tags: ['devices'],
        summary: 'Rename, enable or disable a device, or set its rate limits',
        params: IdParams,
        body: Type.Object(
          {
            name: Type.Optional(Name),
            enabled: Type.Optional(Type.Boolean()),
            rate_limit_per_minute: newRateLimit('minute'),
            rate_limit_per_hour: newRateLimit('hour'),
            rate_limit_per_day: newRateLimit('day'),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ rate_limit_per_minute: 6 }] },
        ),
        response: { 200: DeviceRecord, ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      await ownDevice(request.auth.user.id, id);
      const { name, enabled, rate_limit_per_minute, rate_limit_per_hour, rate_limit_per_day } = request.body;
      const device = await updateDevice(app.db, {
        userId: request.auth.user.id,
        id,
        name,
        enabled,
        rateLimitPerMinute: rate_limit_per_minute,
        rateLimitPerHour: rate_limit_per_hour,
        rateLimitPerDay: rate_limit_per_day,
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
