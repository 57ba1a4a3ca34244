import { describe, expect, it, vi } from 'vitest';
import { createDevice, createPairing } from '@smsgw/db';
import { call, createTestUser, send, uniquePhone as phone } from '@smsgw/api/testing';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';

/**
 * Carrier budgets (issue 18, item 4) with two real dispatchers: segments per hour and unique
 * recipients per month hold exactly, round-robin spills to the device with room, a named device's
 * excess waits (never failed), per-SIM budgets pick the SIM with room, and the counters are rebuilt
 * from Postgres after Redis loses them.
 */
const harness = useDispatcherTestApi();
const TWO_SEGMENTS = 'x'.repeat(200);

async function twoDispatchers(): Promise<void> {
  await Promise.all([harness.start(), harness.start()]);
}

/** A user whose devices (each PATCHed with its budgets through the API) have just made a request, so they are available. */
async function userWithDevices(budgets: (Record<string, unknown> | null)[], simCards?: unknown) {
  const { user, apiKey } = await createTestUser(harness.api.db, { devices: 0 });
  const devices: { id: string; token: string }[] = [];
  for (const [i, budget] of budgets.entries()) {
    const { device, token } = await createDevice(harness.api.db, { userId: user.id, name: `budgeted-${i}` });
    await harness.api.db.device.update({ where: { id: device.id }, data: { lastSeenAt: new Date(), ...(simCards ? { simCards } : {}) } });
    if (budget) expect((await call(harness.api.app, apiKey, 'PATCH', `/api/v1/devices/${device.id}`, budget)).statusCode).toBe(200);
    devices.push({ id: device.id, token });
  }
  return { apiKey, devices };
}

async function sendEach(apiKey: string, messages: { to: string; body?: string; device_id?: string; sim_number?: number }[]): Promise<string[]> {
  const ids: string[] = [];
  for (const { to, body = 'hello', ...rest } of messages) {
    const res = await send(harness.api.app, apiKey, { recipients: [to], body, ...rest });
    expect(res.statusCode).toBe(200);
    ids.push(...(res.json().message_ids as string[]));
  }
  return ids;
}

async function rows(ids: string[]) {
  return harness.api.db.message.findMany({
    where: { id: { in: ids } },
    select: { id: true, state: true, deviceId: true, segments: true, to: true, simNumber: true },
  });
}

async function delayedCount(ids: string[]): Promise<number> {
  const states = await Promise.all(ids.map((id) => harness.api.queue.getJobState(id)));
  return states.filter((s) => s === 'delayed').length;
}

describe('carrier budgets', () => {
  it('holds a device to its segments per hour across two dispatchers, and spills round-robin to the device with room', async () => {
    const {
      apiKey,
      devices: [a, b],
    } = await userWithDevices([{ segments_per_hour: 10 }, null]);
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      Array.from({ length: 20 }, () => ({ to: phone(), body: TWO_SEGMENTS })),
    );
    await vi.waitFor(async () => expect((await rows(ids)).filter((r) => r.state !== 'assigned')).toEqual([]), { timeout: 20_000 });
    const all = await rows(ids);
    expect(all.every((r) => r.segments === 2)).toBe(true);
    expect(all.filter((r) => r.deviceId === a!.id).length).toBe(5);
    expect(all.filter((r) => r.deviceId === b!.id).length).toBe(15);
    const usage = (await call(harness.api.app, apiKey, 'GET', `/api/v1/devices/${a!.id}`)).json();
    expect(usage.segments_per_hour).toBe(10);
    expect(usage.usage.segments_per_hour).toMatchObject({ limit: 10, used: 10, resets_at: expect.any(String) });
    expect(Date.parse(usage.usage.segments_per_hour.resets_at) - Date.now()).toBeGreaterThan(3_500_000);
    expect(usage.health.reasons).toContain('budget_exhausted');
  });

  it('counts a recipient once a month: across two dispatchers a named device takes only known recipients once full, and the new one waits', async () => {
    const {
      apiKey,
      devices: [a],
    } = await userWithDevices([{ unique_recipients_per_month: 2 }]);
    await twoDispatchers();
    const [r1, r2, r3] = [phone(), phone(), phone()];
    const ids = await sendEach(
      apiKey,
      [r1, r2, r1, r2, r1].map((to) => ({ to, device_id: a!.id })),
    );
    await vi.waitFor(async () => expect((await rows(ids)).filter((r) => r.state !== 'assigned')).toEqual([]), { timeout: 20_000 });
    const [waiting] = await sendEach(apiKey, [{ to: r3!, device_id: a!.id }]);
    const known = await sendEach(apiKey, [{ to: r2!, device_id: a!.id }]);
    await vi.waitFor(async () => expect(await delayedCount([waiting!])).toBe(1), { timeout: 20_000 });
    await vi.waitFor(async () => expect((await rows(known))[0]!.state).toBe('assigned'), { timeout: 20_000 });
    const [held] = await rows([waiting!]);
    expect(held).toMatchObject({ state: 'pending', deviceId: null });
    const job = await harness.api.queue.getJob(waiting!);
    expect(job!.timestamp + job!.delay).toBeGreaterThan(Date.now() + 60_000); // until the month ends, never failed
    const device = (await call(harness.api.app, apiKey, 'GET', `/api/v1/devices/${a!.id}`)).json();
    expect(device.usage.unique_recipients_per_month).toMatchObject({ limit: 2, used: 2 });
  });

  it('holds unique recipients per month across two dispatchers, spilling new recipients to the device with room', async () => {
    const {
      apiKey,
      devices: [a, b],
    } = await userWithDevices([{ unique_recipients_per_month: 3 }, null]);
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      Array.from({ length: 12 }, () => ({ to: phone() })),
    );
    await vi.waitFor(async () => expect((await rows(ids)).filter((r) => r.state !== 'assigned')).toEqual([]), { timeout: 20_000 });
    const all = await rows(ids);
    expect(new Set(all.filter((r) => r.deviceId === a!.id).map((r) => r.to)).size).toBe(3);
    expect(all.filter((r) => r.deviceId === b!.id)).toHaveLength(9);
  });

  it("keeps a named device's excess of segments waiting, never failed", async () => {
    const {
      apiKey,
      devices: [a],
    } = await userWithDevices([{ segments_per_day: 4 }]);
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      Array.from({ length: 4 }, () => ({ to: phone(), body: TWO_SEGMENTS, device_id: a!.id })),
    );
    await vi.waitFor(async () => expect(await delayedCount(ids)).toBe(2), { timeout: 20_000 });
    const all = await rows(ids);
    expect(all.filter((r) => r.state === 'assigned')).toHaveLength(2);
    expect(all.filter((r) => r.state === 'pending')).toHaveLength(2);
    expect(all.some((r) => r.state === 'failed')).toBe(false);
  });

  it('picks the SIM with room on a device with per-SIM budgets, and the device is told that sim_number', async () => {
    const simCards = [
      { slotIndex: 0, simNumber: 1 },
      { slotIndex: 1, simNumber: 2 },
    ];
    const {
      apiKey,
      devices: [a],
    } = await userWithDevices(
      [
        {
          sims: [
            { sim_number: 1, segments_per_day: 2 },
            { sim_number: 2, segments_per_day: 3 },
          ],
        },
      ],
      simCards,
    );
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      Array.from({ length: 6 }, () => ({ to: phone(), device_id: a!.id })),
    );
    await vi.waitFor(async () => expect(await delayedCount(ids)).toBe(1), { timeout: 20_000 });
    const all = await rows(ids);
    expect(all.filter((r) => r.simNumber === 1 && r.state === 'assigned')).toHaveLength(2);
    expect(all.filter((r) => r.simNumber === 2 && r.state === 'assigned')).toHaveLength(3);
    const claim = await harness.api.app.inject({ method: 'GET', url: '/api/v1/device/messages?limit=50', headers: { authorization: `Bearer ${a!.token}` } });
    const claimed = claim.json().messages as { id: string; sim_number: number | null }[];
    expect(claimed.map((m) => m.sim_number).sort()).toEqual([1, 1, 2, 2, 2]);
    const device = (await call(harness.api.app, apiKey, 'GET', `/api/v1/devices/${a!.id}`)).json();
    expect(device.usage.sims).toEqual([
      expect.objectContaining({ sim_number: 1, segments_per_day: expect.objectContaining({ limit: 2, used: 2 }) }),
      expect.objectContaining({ sim_number: 2, segments_per_day: expect.objectContaining({ limit: 3, used: 3 }) }),
    ]);
    expect(device.health.reasons).toContain('budget_exhausted');
  });

  it('tells an SMS Gate phone that reported two SIMs the SIM picked for each message (simNumber in its pull)', async () => {
    const { user, apiKey } = await createTestUser(harness.api.db, { devices: 0 });
    const { code } = await createPairing(harness.api.db, { userId: user.id, ttlSeconds: 600 });
    const app = { 'user-agent': 'me.capcom.smsgateway/1.68.0', 'content-type': 'application/json' };
    const simCards = [
      { slotIndex: 0, simNumber: 1, carrierName: '****' },
      { slotIndex: 1, simNumber: 2, carrierName: '****' },
    ];
    const registered = await harness.api.app.inject({
      method: 'POST',
      url: '/mobile/v1/device',
      headers: { ...app, authorization: `Code ${code}` },
      payload: JSON.stringify({ name: 'Pixel/2 SIMs', simCards }),
    });
    expect(registered.statusCode).toBe(201);
    const gate = registered.json() as { id: string; token: string };
    const bearer = { ...app, authorization: `Bearer ${gate.token}` };
    expect(
      (await harness.api.app.inject({ method: 'PATCH', url: '/mobile/v1/device', headers: bearer, payload: JSON.stringify({ id: gate.id }) })).statusCode,
    ).toBe(204);
    expect((await call(harness.api.app, apiKey, 'PATCH', `/api/v1/devices/${gate.id}`, { sims: [{ sim_number: 1, segments_per_hour: 1 }] })).statusCode).toBe(
      200,
    );
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      [0, 1, 2].map(() => ({ to: phone() })),
    );
    await vi.waitFor(async () => expect((await rows(ids)).filter((r) => r.state !== 'assigned')).toEqual([]), { timeout: 20_000 });
    const pull = await harness.api.app.inject({
      method: 'GET',
      url: '/mobile/v1/message',
      headers: { 'user-agent': app['user-agent'], authorization: bearer.authorization },
    });
    expect(pull.statusCode).toBe(200);
    expect((pull.json() as { simNumber?: number }[]).map((m) => m.simNumber).sort()).toEqual([1, 2, 2]);
  });

  it('keeps a message that asks for a full SIM waiting, while the other SIM still sends', async () => {
    const simCards = [{ simNumber: 1 }, { simNumber: 2 }];
    const {
      apiKey,
      devices: [a],
    } = await userWithDevices([{ sims: [{ sim_number: 1, segments_per_day: 1 }] }], simCards);
    await twoDispatchers();
    const ids = await sendEach(
      apiKey,
      [1, 1, 2].map((sim) => ({ to: phone(), device_id: a!.id, sim_number: sim })),
    );
    // The two that fit are assigned, each on its SIM (the second dispatcher's batch may land after the delay is counted).
    await vi.waitFor(
      async () => {
        expect(await delayedCount(ids)).toBe(1);
        expect(
          (await rows(ids))
            .filter((r) => r.state === 'assigned')
            .map((r) => r.simNumber)
            .sort(),
        ).toEqual([1, 2]);
      },
      { timeout: 20_000 },
    );
    // And the third stays waiting: SIM 1 has spent its day.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(
      (await rows(ids))
        .filter((r) => r.state === 'assigned')
        .map((r) => r.simNumber)
        .sort(),
    ).toEqual([1, 2]);
  });

  it('rebuilds the counters from Postgres when Redis loses them', async () => {
    const {
      apiKey,
      devices: [a],
    } = await userWithDevices([{ segments_per_hour: 3 }]);
    const first = await sendEach(
      apiKey,
      [0, 1].map(() => ({ to: phone(), device_id: a!.id })),
    );
    await twoDispatchers();
    await vi.waitFor(async () => expect((await rows(first)).filter((r) => r.state !== 'assigned')).toEqual([]), { timeout: 20_000 });
    const redis = (harness.api.app as unknown as { redis: import('ioredis').Redis }).redis;
    const keys = await redis.keys(`${harness.api.config.QUEUE_PREFIX}:budget:${a!.id}:*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    const more = await sendEach(
      apiKey,
      [0, 1].map(() => ({ to: phone(), device_id: a!.id })),
    );
    await vi.waitFor(async () => expect(await delayedCount(more)).toBe(1), { timeout: 20_000 });
    expect((await rows(more)).filter((r) => r.state === 'assigned')).toHaveLength(1);
  });
});
