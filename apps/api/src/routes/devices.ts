import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isUuid } from '@smsgw/core';
import { createDevice, deleteDevice, findDevice, isAvailable, listDevices, updateDevice, type DeviceRow } from '@smsgw/db';
import { authErrors, ErrorBody, IdParams, NullableTimestamp, Timestamp } from '../schemas/common.ts';

const DeviceRecord = Type.Object({
  id: Type.String(),
  name: Type.String(),
  enabled: Type.Boolean(),
  available: Type.Boolean({ description: 'Enabled and seen within DEVICE_AVAILABLE_SECONDS.' }),
  last_seen_at: NullableTimestamp,
  created_at: Timestamp,
  updated_at: Timestamp,
});
const Name = Type.String({ minLength: 1, maxLength: 100 });

/** `/api/v1/devices`: the user's sending devices. The device token is shown once, on creation. */
const deviceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  const toRecord = (device: DeviceRow) => ({
    id: device.id,
    name: device.name,
    enabled: device.enabled,
    available: isAvailable(device, new Date(Date.now() - app.config.DEVICE_AVAILABLE_SECONDS * 1000)),
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    created_at: device.createdAt.toISOString(),
    updated_at: device.updatedAt.toISOString(),
  });

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
        body: Type.Object({ name: Name }, { additionalProperties: false }),
        response: { 201: Type.Intersect([DeviceRecord, Type.Object({ token: Type.String() })]), 400: ErrorBody, ...authErrors },
      },
    },
    async (request, reply) => {
      const { token, device } = await createDevice(app.db, { userId: request.auth.user.id, name: request.body.name });
      return reply.status(201).send({ ...toRecord(device), token });
    },
  );

  app.get(
    '/api/v1/devices',
    { schema: { tags: ['devices'], summary: 'List devices', response: { 200: Type.Object({ data: Type.Array(DeviceRecord) }), ...authErrors } } },
    async (request) => ({ data: (await listDevices(app.db, request.auth.user.id)).map(toRecord) }),
  );

  app.get(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Get a device', params: IdParams, response: { 200: DeviceRecord, 404: ErrorBody, ...authErrors } } },
    async (request) => toRecord(await ownDevice(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/devices/:id',
    {
      schema: {
        tags: ['devices'],
        summary: 'Rename, enable or disable a device',
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Name), enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 }),
        response: { 200: DeviceRecord, 400: ErrorBody, 404: ErrorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id } = request.params;
      await ownDevice(request.auth.user.id, id);
      const device = await updateDevice(app.db, { userId: request.auth.user.id, id, ...request.body });
      if (!device) throw new AppError('not_found', 'Device not found');
      return toRecord(device);
    },
  );

  app.delete(
    '/api/v1/devices/:id',
    { schema: { tags: ['devices'], summary: 'Delete a device', params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, ...authErrors } } },
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
