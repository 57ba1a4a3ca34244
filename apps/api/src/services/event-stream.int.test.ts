import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

/**
 * A device stream whose peer stopped reading (docs/devices.md, "Availability"): the API's writes
 * pile up once the socket's buffers are full, and the stream is ended as dead at the next keepalive.
 */
let api: TestApi;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  api = await startTestApi({ DEVICE_HEARTBEAT_SECONDS: '1', DEVICE_STREAM_GRACE_SECONDS: '1' });
  await api.app.listen({ port: 0, host: '127.0.0.1' });
  port = (api.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await api?.close();
});

describe('a device stream nobody reads', () => {
  it('is ended when a keepalive is not written out by the next one, and the device counts as closed', async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const { id, token } = devices[0]!;
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.write(`GET /api/v1/device/events HTTP/1.1\r\nHost: smsgw\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    // The first bytes of the answer, then nothing more is read: the phone's app hangs.
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    await vi.waitFor(async () => expect((await api.db.device.findUniqueOrThrow({ where: { id } })).streamSeenAt).not.toBeNull());

    // Wake-ups until far more is written than the kernel's buffers on both sides hold.
    for (let i = 0; i < 400_000; i++) api.app.wakeups.wake(id);

    await vi.waitFor(async () => expect((await api.db.device.findUniqueOrThrow({ where: { id } })).streamClosedAt).not.toBeNull(), {
      timeout: 10_000,
      interval: 100,
    });
  });
});
