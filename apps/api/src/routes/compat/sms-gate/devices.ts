import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AppError, isUuid } from '@smsgw/core';
import { deleteDevice, listDevices, type DeviceRow } from '@smsgw/db';
import { IdParams, SmsGateDevice, smsGateErrors } from './schemas.ts';

const tags = ['sms-gate-client'];

/** `/devices` (and upstream's deprecated `/device`): every device of the user, phones, modems and simulators alike. */
const deviceRoutes: FastifyPluginAsyncTypebox<{ deprecated: boolean }> = async (app, { deprecated }) => {
  const schema = { tags, ...(deprecated && { deprecated: true }) };

  app.get(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      schema: { ...schema, summary: 'List devices', response: { 200: Type.Array(SmsGateDevice), ...smsGateErrors(401, 403, 429) } },
    },
    async (request) => (await listDevices(app.sql, request.auth.user.id)).map(toDevice),
  );

  app.delete(
    '/:id',
    {
      schema: {
        ...schema,
        summary: 'Delete a device (as DELETE /api/v1/devices/:id)',
        params: IdParams,
        response: { 204: Type.Null(), ...smsGateErrors(401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteDevice(app.sql, { userId: request.auth.user.id, id }))) throw new AppError('not_found', 'device not found');
      return reply.status(204).send(null);
    },
  );
};
export default deviceRoutes;

/** A device as upstream's `Device`: lastSeen is its last request or stream, else its creation. */
function toDevice(d: DeviceRow) {
  const seen = [d.lastSeenAt, d.streamSeenAt].filter((t): t is Date => t !== null).sort((a, b) => b.getTime() - a.getTime())[0] ?? d.createdAt;
  const simCards = Array.isArray(d.simCards) ? d.simCards.flatMap(toSimCard) : [];
  return {
    id: d.id,
    name: d.name,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    lastSeen: seen.toISOString(),
    ...(simCards.length > 0 && { simCards }),
  };
}

/** A SIM as the SMS Gate app reported it (its fields of SMS Gate's `SimCard`); anything else is left out. */
function toSimCard(sim: unknown) {
  if (typeof sim !== 'object' || sim === null) return [];
  const s = sim as Record<string, unknown>;
  if (!Number.isInteger(s.slotIndex) || !Number.isInteger(s.simNumber)) return [];
  const text = (name: string) => (typeof s[name] === 'string' ? { [name]: s[name] as string } : {});
  return [{ slotIndex: s.slotIndex as number, simNumber: s.simNumber as number, ...text('phoneNumber'), ...text('carrierName'), ...text('iccid') }];
}
