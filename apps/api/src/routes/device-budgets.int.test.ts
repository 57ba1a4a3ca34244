import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, uniquePhone, type TestApi } from '../testing/test-api.ts';

/** Setting a device's carrier budgets (issue 18, item 4) and what its record shows of them. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const patch = (apiKey: string, id: string, payload: unknown) => call(api.app, apiKey, 'PATCH', `/api/v1/devices/${id}`, payload);
const get = async (apiKey: string, id: string) => (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json();
const budgetColumns = async (id: string) => {
  const d = await api.db.device.findUniqueOrThrow({ where: { id } });
  return {
    hour: d.segmentsPerHour,
    day: d.segmentsPerDay,
    month: d.segmentsPerMonth,
    recipients: d.uniqueRecipientsPerMonth,
    sims: d.simBudgets,
    changed: d.budgetsChangedAt,
  };
};
const TWO_SIMS = [
  { slotIndex: 0, simNumber: 1 },
  { slotIndex: 1, simNumber: 2 },
];

describe('device carrier budgets', () => {
  it('sets, shows and removes the budgets of the device and of its SIMs; fields left out stay', async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    await api.db.device.update({ where: { id }, data: { simCards: TWO_SIMS } });
    const set = await patch(apiKey, id, { segments_per_hour: 100, unique_recipients_per_month: 250, sims: [{ sim_number: 2, segments_per_day: 100 }] });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({
      segments_per_hour: 100,
      segments_per_day: null,
      segments_per_month: null,
      unique_recipients_per_month: 250,
      sims: [{ sim_number: 2, segments_per_hour: null, segments_per_day: 100, segments_per_month: null, unique_recipients_per_month: null }],
    });
    const more = await patch(apiKey, id, {
      sims: [
        { sim_number: 1, segments_per_month: 3000 },
        { sim_number: 2, segments_per_hour: 30 },
      ],
    });
    expect(more.json()).toMatchObject({
      segments_per_hour: 100,
      sims: [
        { sim_number: 1, segments_per_month: 3000 },
        { sim_number: 2, segments_per_hour: 30, segments_per_day: 100 },
      ],
    });
    const cleared = await patch(apiKey, id, { segments_per_hour: null, sims: [{ sim_number: 1, segments_per_month: null }] });
    expect(cleared.json()).toMatchObject({ segments_per_hour: null, unique_recipients_per_month: 250, sims: [{ sim_number: 2 }] });
    expect(cleared.json().sims).toHaveLength(1);
    const listed = (await call(api.app, apiKey, 'GET', '/api/v1/devices')).json().data[0];
    expect(listed).toMatchObject({ unique_recipients_per_month: 250, sims: [{ sim_number: 2, segments_per_hour: 30, segments_per_day: 100 }] });
  });

  it('shows usage against each limit, counting segments and recipients once, with when each window resets', async () => {
    const { userId, apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    await patch(apiKey, id, { segments_per_day: 10, unique_recipients_per_month: 5 });
    const now = new Date();
    const [to1, to2] = [uniquePhone(), uniquePhone()];
    const base = { userId, deviceId: id, body: 'x', encoding: 'GSM_7' as const, state: 'assigned' as const, assignedAt: now };
    await api.db.message.createMany({
      data: [
        { ...base, id: crypto.randomUUID(), to: to1, segments: 3 },
        { ...base, id: crypto.randomUUID(), to: to1, segments: 1 },
        { ...base, id: crypto.randomUUID(), to: to2, segments: 2 },
        // Handed out before this UTC month: counts in no window shown.
        { ...base, id: crypto.randomUUID(), to: uniquePhone(), segments: 5, assignedAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)) },
      ],
    });
    const { usage } = await get(apiKey, id);
    const tomorrow = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    const nextMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(usage).toEqual({
      segments_per_hour: { limit: null, used: 6, resets_at: expect.any(String) },
      segments_per_day: { limit: 10, used: 6, resets_at: tomorrow },
      segments_per_month: { limit: null, used: 6, resets_at: nextMonth },
      unique_recipients_per_month: { limit: 5, used: 2, resets_at: nextMonth },
      sims: [],
    });
    const resets = Date.parse(usage.segments_per_hour.resets_at);
    expect(resets - now.getTime()).toBeGreaterThan(3_500_000);
    expect(resets - now.getTime()).toBeLessThanOrEqual(3_600_000);
  });

  it.each([
    [{ segments_per_hour: 0 }, 'segments_per_hour'],
    [{ segments_per_day: -5 }, 'segments_per_day'],
    [{ segments_per_month: 10_000_001 }, 'segments_per_month'],
    [{ unique_recipients_per_month: 2.5 }, 'unique_recipients_per_month'],
    [{ segments_per_hour: '100' }, 'segments_per_hour'],
    [{ sims: [{ sim_number: 1, segments_per_day: 0 }] }, 'segments_per_day'],
    [{ sims: [{ sim_number: 4, segments_per_day: 10 }] }, 'sim_number'],
    [{ sims: [{ sim_number: 2, segments_per_day: 10 }] }, 'sim_number'],
    [
      {
        sims: [
          { sim_number: 1, segments_per_day: 10 },
          { sim_number: 1, segments_per_hour: 5 },
        ],
      },
      'sim_number',
    ],
    [{ sims: [{ segments_per_day: 10 }] }, 'sim_number'],
    [{ sims: [{ sim_number: 1, per_day: 10 }] }, 'per_day'],
  ])('refuses %j with 400 naming the field, and changes nothing', async (body, field) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    await patch(apiKey, id, { segments_per_hour: 30, sims: [{ sim_number: 1, segments_per_month: 900 }] });
    const before = await budgetColumns(id);
    const res = await patch(apiKey, id, { segments_per_month: 77, name: 'renamed', ...body });
    expect({ status: res.statusCode, error: res.json().error }).toEqual({ status: 400, error: 'invalid_request' });
    expect(res.json().message).toContain(field);
    expect(await budgetColumns(id)).toEqual(before);
    expect((await api.db.device.findUniqueOrThrow({ where: { id } })).name).not.toBe('renamed');
  });

  it("answers 404 for another user's device and changes nothing", async () => {
    const owner = await createTestUser(api.db, { devices: 1 });
    const other = await createTestUser(api.db, { devices: 0 });
    const id = owner.devices[0]!.id;
    const before = await budgetColumns(id);
    const res = await patch(other.apiKey, id, { segments_per_day: 10, sims: [{ sim_number: 1, segments_per_day: 5 }] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
    expect(await budgetColumns(id)).toEqual(before);
  });
});
