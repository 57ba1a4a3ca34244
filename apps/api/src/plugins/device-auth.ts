import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { authenticateDevice, markDeviceSeen, type AuthenticatedDevice } from '@smsgw/db';

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook of the device endpoints: sets `request.device` or answers 401 (429 after too many refusals). */
    authenticateDevice: (request: FastifyRequest) => Promise<void>;
  }
  interface FastifyRequest {
    device: AuthenticatedDevice;
  }
}

/**
 * Device tokens (`Authorization: Bearer smsgw_dt_…`) authenticate only the device endpoints, and
 * user credentials never do. Every authenticated device request counts as the device being seen.
 */
export const deviceAuth = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('device', null as unknown as AuthenticatedDevice);
    app.decorate('authenticateDevice', async (request: FastifyRequest) => {
      const device = await app.verifyCredential(request, async () => {
        const token = request.headers.authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
        return token ? authenticateDevice(app.sql, token) : null;
      });
      await markDeviceSeen(app.sql, device, new Date());
      request.device = device;
    });
  },
  { name: 'device-auth', dependencies: ['resources', 'auth-failures'] },
);
