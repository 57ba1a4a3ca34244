import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { call, createTestUser, send, uniquePhone as phone, type TestUser } from '@smsgw/api/testing';
import { useDispatcherTestApi } from './testing/test-dispatcher.ts';

/** Sticky sender (issue 18, item 7) with a real dispatcher: a recipient keeps its device while that device is available. */
const harness = useDispatcherTestApi();

async function stickyUser(on = true): Promise<TestUser> {
  const user = await createTestUser(harness.api.db, { devices: 2 });
  const res = await call(harness.api.app, user.apiKey, 'PATCH', '/api/v1/settings', { sticky_sender: on });
  expect(res.statusCode).toBe(200);
  return user;
}

/** Sends one message to `to` and waits until the dispatcher assigned it; returns its device. */
async function sendAndAssign(user: TestUser, to: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await send(harness.api.app, user.apiKey, { recipients: [to], body: 'hello', ...extra });
  expect(res.statusCode).toBe(200);
  const [id] = res.json().message_ids as string[];
  return vi.waitFor(
    async () => {
      const row = await harness.api.db.message.findUniqueOrThrow({ where: { id: id! } });
      expect(row.state).toBe('assigned');
      return row.deviceId!;
    },
    { timeout: 15_000, interval: 100 },
  );
}

async function setAvailable(deviceId: string, available: boolean): Promise<void> {
  await harness.api.db.device.update({ where: { id: deviceId }, data: { lastSeenAt: available ? new Date() : new Date(0) } });
}

describe('sticky sender', () => {
  it('sends 5 messages to a recipient from the same device while other recipients go round-robin over both', async () => {
    const user = await stickyUser();
    await harness.start();
    const to = phone();
    const used: string[] = [];
    const others = new Set<string>();
    for (let i = 0; i < 5; i++) {
      used.push(await sendAndAssign(user, to));
      others.add(await sendAndAssign(user, phone()));
    }
    expect(new Set(used).size).toBe(1);
    expect(others).toEqual(new Set(user.devices.map((d) => d.id)));
    expect(await harness.api.db.stickySender.findMany({ where: { userId: user.userId, phone: to } })).toEqual([
      expect.objectContaining({ deviceId: used[0], simNumber: null }),
    ]);
  });

  it('falls back to the other device when the sticky one goes offline, and the new device then sticks', async () => {
    const user = await stickyUser();
    await harness.start();
    const to = phone();
    const first = await sendAndAssign(user, to);
    const other = user.devices.map((d) => d.id).find((id) => id !== first)!;

    await setAvailable(first, false);
    expect(await sendAndAssign(user, to)).toBe(other);
    await setAvailable(first, true);
    for (let i = 0; i < 3; i++) expect(await sendAndAssign(user, to)).toBe(other);
  });

  it('makes the device that received an SMS from a number, with its SIM, the sticky one for it', async () => {
    const user = await stickyUser();
    await harness.start();
    const from = phone();
    const receiver = user.devices[1]!;
    const res = await harness.api.app.inject({
      method: 'POST',
      url: '/api/v1/device/inbound',
      headers: { authorization: `Bearer ${receiver.token}` },
      payload: { messages: [{ id: randomUUID(), from, message: 'hi there', received_at: new Date().toISOString(), sim_number: 2 }] },
    });
    expect(res.statusCode).toBe(202);

    for (let i = 0; i < 3; i++) expect(await sendAndAssign(user, from)).toBe(receiver.id);
    const rows = await harness.api.db.message.findMany({ where: { userId: user.userId, to: from } });
    expect(rows.map((r) => r.simNumber)).toEqual([2, 2, 2]);
  });

  it('lets a named device win over the sticky one', async () => {
    const user = await stickyUser();
    await harness.start();
    const to = phone();
    const first = await sendAndAssign(user, to);
    const other = user.devices.map((d) => d.id).find((id) => id !== first)!;
    expect(await sendAndAssign(user, to, { device_id: other })).toBe(other);
  });

  it('is off by default: the same recipient goes round-robin and nothing is remembered', async () => {
    const user = await stickyUser(false);
    await harness.start();
    const to = phone();
    const used = new Set([await sendAndAssign(user, to), await sendAndAssign(user, to)]);
    expect(used.size).toBe(2);
    expect(await harness.api.db.stickySender.count({ where: { userId: user.userId } })).toBe(0);
  });
});
