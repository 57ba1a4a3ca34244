import { describe, expect, it, vi } from 'vitest';
import { createDevice } from '@smsgw/db';
import { createTestUser, send, uniquePhone as phone } from '@smsgw/api/testing';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';

/**
 * Per-device pacing (issue 16, item 3) with two real dispatchers: a device is handed at most its
 * limit in any window, round-robin gives the excess to devices with room, and a named device's
 * excess waits, never fails.
 */
const harness = useDispatcherTestApi();

async function twoDispatchers(): Promise<void> {
  await Promise.all([harness.start(), harness.start()]);
}

/** A user whose devices (each with `limits`) have just made a request, so they are available. */
async function userWithDevices(limits: ({ perMinute?: number; perHour?: number } | null)[]) {
  const { user, apiKey } = await createTestUser(harness.api.db, { devices: 0 });
  const ids: string[] = [];
  for (const [i, limit] of limits.entries()) {
    const { device } = await createDevice(harness.api.db, { userId: user.id, name: `paced-${i}` });
    await harness.api.db.device.update({
      where: { id: device.id },
      data: { lastSeenAt: new Date(), rateLimitPerMinute: limit?.perMinute ?? null, rateLimitPerHour: limit?.perHour ?? null },
    });
    ids.push(device.id);
  }
  return { userId: user.id, apiKey, deviceIds: ids };
}

async function sendEach(apiKey: string, count: number, deviceId?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await send(harness.api.app, apiKey, { recipients: [phone()], body: `paced ${i}`, ...(deviceId && { device_id: deviceId }) });
    expect(res.statusCode).toBe(200);
    ids.push(...(res.json().message_ids as string[]));
  }
  return ids;
}

async function states(ids: string[]) {
  const rows = await harness.api.db.message.findMany({ where: { id: { in: ids } }, select: { id: true, state: true, deviceId: true } });
  return {
    rows,
    by: (deviceId: string) => rows.filter((r) => r.deviceId === deviceId).length,
    pending: rows.filter((r) => r.state === 'pending').map((r) => r.id),
  };
}

describe('pacing', () => {
  it("hands a device limited to 6 a minute at most 6, and gives round-robin's excess to the other device", async () => {
    const { apiKey, deviceIds } = await userWithDevices([{ perMinute: 6 }, null]);
    await twoDispatchers();
    const ids = await sendEach(apiKey, 30);
    await vi.waitFor(async () => expect((await states(ids)).pending).toEqual([]), { timeout: 15_000 });
    const { by, rows } = await states(ids);
    expect(by(deviceIds[0]!)).toBe(6);
    expect(by(deviceIds[1]!)).toBe(24);
    expect(rows.every((r) => r.state === 'assigned')).toBe(true);
  });

  it("keeps a named device's excess waiting (delayed, still queued), never failed, across two dispatchers", async () => {
    const { apiKey, deviceIds } = await userWithDevices([{ perMinute: 6 }]);
    await twoDispatchers();
    const ids = await sendEach(apiKey, 12, deviceIds[0]);
    await vi.waitFor(
      async () => {
        const jobStates = await Promise.all(ids.map((id) => harness.api.queue.getJobState(id)));
        expect(jobStates.filter((s) => s === 'delayed')).toHaveLength(6);
      },
      { timeout: 15_000 },
    );
    const { by, pending, rows } = await states(ids);
    expect(by(deviceIds[0]!)).toBe(6);
    expect(pending).toHaveLength(6);
    expect(rows.some((r) => r.state === 'failed')).toBe(false);
    // They run again when a place frees: within the minute, not before most of it has passed.
    for (const id of pending) {
      const job = await harness.api.queue.getJob(id);
      const runsAt = job!.timestamp + job!.delay;
      expect(runsAt - Date.now()).toBeGreaterThan(40_000);
      expect(runsAt - Date.now()).toBeLessThanOrEqual(60_000);
    }
  });

  it('makes round-robin messages wait when every device of the user is at its limit', async () => {
    const { apiKey, deviceIds } = await userWithDevices([{ perHour: 2 }, { perMinute: 1 }]);
    await twoDispatchers();
    const ids = await sendEach(apiKey, 5);
    await vi.waitFor(
      async () => {
        const jobStates = await Promise.all(ids.map((id) => harness.api.queue.getJobState(id)));
        expect(jobStates.filter((s) => s === 'delayed')).toHaveLength(2);
      },
      { timeout: 15_000 },
    );
    const { by, pending } = await states(ids);
    expect([by(deviceIds[0]!), by(deviceIds[1]!)]).toEqual([2, 1]);
    expect(pending).toHaveLength(2);
  });
});

describe('SMS Gate priority', () => {
  it('hands a named device limited to 6 a minute every message of priority 100 or more beyond its limit, and paces the others', async () => {
    const { apiKey, deviceIds } = await userWithDevices([{ perMinute: 6 }]);
    await twoDispatchers();
    const sendGate = async (priority: number) => {
      const res = await harness.api.app.inject({
        method: 'POST',
        url: '/3rdparty/v1/messages',
        headers: { authorization: `Bearer ${apiKey}` },
        payload: { message: `priority ${priority}`, phoneNumbers: [phone(), phone(), phone(), phone(), phone()], deviceId: deviceIds[0], priority },
      });
      expect(res.statusCode).toBe(202);
      return (await harness.api.db.message.findMany({ where: { batch: { externalId: res.json().id } }, select: { id: true } })).map((m) => m.id);
    };
    const urgent = [...(await sendGate(100)), ...(await sendGate(127))];
    const normal = [...(await sendGate(99)), ...(await sendGate(0))];
    await vi.waitFor(async () => expect((await states(urgent)).pending).toEqual([]), { timeout: 15_000 });
    await vi.waitFor(async () => expect((await states(normal)).by(deviceIds[0]!)).toBe(6), { timeout: 15_000 });
    expect((await states(urgent)).by(deviceIds[0]!)).toBe(10);
    expect((await states(normal)).pending).toHaveLength(4);
  });
});
