import { describe, expect, it } from 'vitest';
import { planRouting } from './plan.ts';
import { budgets, message, perHour, planTable as table, snapshot, used } from './testing/plan-table.ts';

const full = (retryInMs: number) => ({ room: 0, retryInMs });

describe('rule 5, pacing (fit, then spill or wait)', () => {
  table([
    {
      name: 'a paced device takes what fits its windows; round-robin spills the rest to the device with room',
      sketch: {
        messages: [message('m1'), message('m2'), message('m3')],
        pools: { u1: ['d1', 'd2'] },
        cursors: { u1: 0 },
        rateLimits: { d1: perHour(5) },
        room: { d1: { room: 1, retryInMs: 9000 } },
      },
      plan: { m1: 'd1', m2: 'd2', m3: 'd2' },
    },
    {
      name: "a named device's excess waits until a place frees, never fails",
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1' }), message('m2', { requestedDeviceId: 'd1' })],
        rateLimits: { d1: perHour(1) },
        room: { d1: { room: 1, retryInMs: 12_000 } },
      },
      plan: { m1: 'd1', m2: 'wait 12s (paced)' },
    },
    {
      name: 'when every device of the pool is full the message waits for the soonest (at least a second)',
      sketch: { messages: [message('m1'), message('m2')], rateLimits: { d1: perHour(1), d2: perHour(1) }, room: { d1: full(30_000), d2: full(20_000) } },
      plan: { m1: 'wait 20s (paced)', m2: 'wait 20s (paced)' },
    },
    {
      name: 'a priority of 100 or more skips pacing',
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1', priority: 100 }), message('m2', { requestedDeviceId: 'd1', priority: 99 })],
        rateLimits: { d1: perHour(1) },
        room: { d1: full(0) },
      },
      plan: { m1: 'd1', m2: 'wait 1s (paced)' },
    },
    {
      name: 'spilled messages fill the limited devices with room first, then the unlimited ones',
      sketch: {
        messages: ['m1', 'm2', 'm3', 'm4', 'm5'].map((id) => message(id)),
        pools: { u1: ['d1', 'd2', 'd3'] },
        rateLimits: { d1: perHour(1), d3: perHour(9) },
        room: { d1: full(1000), d3: { room: 2, retryInMs: 4000 } },
      },
      plan: { m1: 'd3', m2: 'd2', m3: 'd3', m4: 'd2', m5: 'd2' },
    },
    {
      name: 'the unlimited devices share the spilled messages evenly',
      sketch: {
        messages: ['m1', 'm2', 'm3', 'm4', 'm5', 'm6'].map((id) => message(id)),
        pools: { u1: ['d1', 'd2', 'd3'] },
        rateLimits: { d1: perHour(1) },
        room: { d1: full(1000) },
      },
      plan: { m1: 'd2', m2: 'd2', m3: 'd3', m4: 'd3', m5: 'd2', m6: 'd3' },
    },
  ]);
});

describe('rule 6, carrier budgets after pacing', () => {
  table([
    {
      name: 'a device whose hourly budget is spent spills round-robin messages to the other device',
      sketch: { messages: [message('m1'), message('m2')], budgets: { d1: budgets({ segmentsPerHour: 2 }) }, counts: { 'd1:0': used(2, { minutesAgo: 30 }) } },
      plan: { m1: 'd2', m2: 'd2' },
    },
    {
      name: 'a device that refused a message is no spill target for the rest of the batch, though a smaller one would fit',
      sketch: {
        messages: [message('m1', { segments: 3 }), message('m2'), message('m3')],
        pools: { u1: ['d1', 'd2', 'd3'] },
        budgets: { d1: budgets({ segmentsPerHour: 2 }), d2: budgets({ segmentsPerHour: 1 }) },
        counts: { 'd2:0': used(1, { minutesAgo: 5 }) },
      },
      plan: { m1: 'd3', m2: 'd3', m3: 'd3' },
    },
    {
      name: 'a message of more parts than the rest of the day waits for the next UTC day',
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1', segments: 3 })],
        budgets: { d1: budgets({ segmentsPerDay: 4 }) },
        counts: { 'd1:0': used(2, { minutesAgo: 120 }) },
      },
      plan: { m1: `wait ${(86_400_000 - (12 * 3600 + 20) * 1000) / 1000}s (budget)` },
    },
    {
      name: 'a recipient already counted this month costs no new recipient: it goes, a new one waits for the month',
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1', to: '+447700900001' }), message('m2', { requestedDeviceId: 'd1', to: '+447700900002' })],
        budgets: { d1: budgets({ uniqueRecipientsPerMonth: 1 }) },
        counts: { 'd1:0': used(1, { recipients: ['+447700900001'] }) },
      },
      plan: { m1: 'd1', m2: `wait ${(Date.UTC(2026, 3, 1) - Date.UTC(2026, 2, 10, 12, 0, 20)) / 1000}s (budget)` },
    },
    {
      name: 'budgets after pacing: the device pacing gave it to has no budget left, so it goes to the next device with pacing room',
      sketch: {
        messages: [message('m1'), message('m2')],
        pools: { u1: ['d1', 'd2', 'd3'] },
        rateLimits: { d1: perHour(9), d2: perHour(9) },
        room: { d1: { room: 5, retryInMs: 0 }, d2: full(7000) },
        budgets: { d1: budgets({ segmentsPerHour: 1 }) },
        counts: { 'd1:0': used(1, { minutesAgo: 1 }) },
      },
      plan: { m1: 'd3', m2: 'd3' },
    },
    {
      name: "budgets after pacing: a spill target's pacing refuses, so the message waits for the soonest budget room",
      sketch: {
        messages: [message('m1')],
        rateLimits: { d2: perHour(1) },
        room: { d2: full(7000) },
        budgets: { d1: budgets({ segmentsPerHour: 1 }) },
        counts: { 'd1:0': used(1, { minutesAgo: 59 }) },
      },
      plan: { m1: 'wait 40s (budget)' },
    },
  ]);
});

describe('SIM choice order (per-SIM budgets)', () => {
  const twoSims = budgets(
    {},
    [
      { simNumber: 1, segmentsPerHour: 1 },
      { simNumber: 2, segmentsPerHour: 1 },
    ],
    [1, 2, 3],
  );
  table([
    {
      name: 'budgeted SIMs while they have room, lowest first, then a SIM without a budget',
      sketch: { messages: ['m1', 'm2', 'm3'].map((id) => message(id, { requestedDeviceId: 'd1' })), budgets: { d1: twoSims } },
      plan: { m1: 'd1 sim 1', m2: 'd1 sim 2', m3: 'd1 sim 3' },
    },
    {
      name: "a budget's SIM pick wins over the sticky SIM",
      sketch: { messages: [message('m1')], pools: { u1: ['d1'] }, sticky: { m1: { deviceId: 'd1', simNumber: 3 } }, budgets: { d1: twoSims } },
      plan: { m1: 'd1 sim 1' },
    },
    {
      name: "a device budget and a SIM budget both hold: the device's spent, no SIM is tried",
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1' })],
        budgets: { d1: budgets({ segmentsPerHour: 1 }, [{ simNumber: 1, segmentsPerHour: 5 }], [1, 2]) },
        counts: { 'd1:0': used(1, { minutesAgo: 59 }) },
      },
      plan: { m1: 'wait 40s (budget)' },
    },
  ]);
});

describe('reservations', () => {
  it('holds a pacing place and budget room for what is assigned, none for what spilled away or failed over', () => {
    const plan = planRouting(
      snapshot({
        messages: [message('m1'), message('m2', { requestedDeviceId: 'd2', attemptedDeviceIds: ['d2'] }), message('m3')],
        rateLimits: { d1: perHour(9), d2: perHour(9) },
        room: { d1: { room: 1, retryInMs: 0 } },
        budgets: { d2: budgets({ segmentsPerHour: 10 }) },
      }),
    );
    expect(plan.reservations.pacing).toEqual([
      { deviceId: 'd1', ids: ['m1'] },
      { deviceId: 'd2', ids: ['m3'] },
    ]);
    expect(plan.reservations.budgets.map((b) => ({ scopes: b.scopes.map((s) => `${s.deviceId}:${s.sim}`), ids: b.ids }))).toEqual([
      { scopes: ['d2:0'], ids: ['m3'] },
    ]);
  });
});
