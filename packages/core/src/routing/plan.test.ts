import { describe, expect, it } from 'vitest';
import { planRouting } from './plan.ts';
import { at, budgets, message, perHour, planTable as table, snapshot, used } from './testing/plan-table.ts';

describe('the planner, as the issue states a plan', () => {
  table([
    {
      name: "X goes to d1 on SIM 2, Z waits 40 s for d2's hourly budget, W has no device left (it was tried on every one)",
      sketch: {
        messages: [message('x'), message('z', { requestedDeviceId: 'd2' }), message('w', { attemptedDeviceIds: ['d1', 'd2'] })],
        budgets: {
          d1: budgets(
            {},
            [
              { simNumber: 1, segmentsPerHour: 5 },
              { simNumber: 2, segmentsPerHour: 10 },
            ],
            [1, 2],
          ),
          d2: budgets({ segmentsPerHour: 3 }),
        },
        counts: { 'd1:1': used(5, { minutesAgo: 10 }), 'd2:0': used(3, { minutesAgo: 59 }) },
      },
      plan: { x: 'd1 sim 2', z: 'wait 40s (budget)', w: 'wait (no_device)' },
    },
  ]);
});

describe('rule 1, hold-back (due date and queue deadline)', () => {
  table([
    {
      name: 'a message not yet due waits until its send_at',
      sketch: { messages: [message('m1', { sendAt: at(90_000) })] },
      plan: { m1: 'wait 90s (not_due)' },
    },
    { name: 'a message past its valid_until fails as expired', sketch: { messages: [message('m1', { validUntil: at(-1) })] }, plan: { m1: 'fail (expired)' } },
    {
      name: 'without valid_until the deadline is MAX_QUEUE_SECONDS from when it was due',
      sketch: { messages: [message('m1', { createdAt: at(-3_600_000) }), message('m2', { createdAt: at(-3_599_000) })] },
      plan: { m1: 'fail (expired)', m2: 'd1' },
    },
    {
      name: 'a scheduled message counts its deadline from its send_at, not from its creation',
      sketch: { messages: [message('m1', { createdAt: at(-7_200_000), sendAt: at(-60_000) })] },
      plan: { m1: 'd1' },
    },
  ]);
});

describe('rule 2, the named device (and SIM)', () => {
  table([
    {
      name: 'a deleted named device fails the message',
      sketch: { messages: [message('m1', { requestedDeviceId: 'd9', requestedDeviceGone: true })] },
      plan: { m1: 'fail (device_gone)' },
    },
    {
      name: 'a named device takes its message even when it is paused or out of the pool; round-robin is not moved by it',
      sketch: { messages: [message('m1', { requestedDeviceId: 'd3' }), message('m2', { requestedDeviceId: 'd2' }), message('m3')], paused: ['d2'] },
      plan: { m1: 'd3', m2: 'd2', m3: 'd1' },
    },
    {
      name: "a named device and SIM: the SIM's budget holds it, and smsgw names no SIM of its own",
      sketch: {
        messages: [message('m1', { requestedDeviceId: 'd1', requestedSim: 2 }), message('m2', { requestedDeviceId: 'd1', requestedSim: 1 })],
        budgets: {
          d1: budgets(
            {},
            [
              { simNumber: 1, segmentsPerHour: 1 },
              { simNumber: 2, segmentsPerHour: 1 },
            ],
            [1, 2],
          ),
        },
        counts: { 'd1:1': used(1, { minutesAgo: 59 }) },
      },
      plan: { m1: 'd1', m2: 'wait 40s (budget)' },
    },
    {
      name: 'a named device the message failed on gives it no device (the failover statement fails it)',
      sketch: { messages: [message('m1', { requestedDeviceId: 'd1', attemptedDeviceIds: ['d1'] })] },
      plan: { m1: 'wait (no_device)' },
    },
  ]);
});

describe('rule 3, sticky sender', () => {
  const sticky = { m1: { deviceId: 'd2', simNumber: 2 } };
  table([
    { name: 'the recipient keeps its device and SIM', sketch: { messages: [message('m1')], sticky }, plan: { m1: 'd2 sim 2' } },
    {
      name: 'sticky vs paused: a paused sticky device gives way to round-robin',
      sketch: { messages: [message('m1')], sticky, paused: ['d2'] },
      plan: { m1: 'd1' },
    },
    {
      name: 'a sticky device the message failed on, or just left, gives way to round-robin',
      sketch: {
        messages: [message('m1', { attemptedDeviceIds: ['d2'] }), message('m2', { previousDeviceId: 'd2' })],
        sticky: { ...sticky, m2: { deviceId: 'd2', simNumber: null } },
        cursors: { u1: 1 },
      },
      plan: { m1: 'd1', m2: 'd1' },
    },
    {
      name: 'a sticky device that pacing refuses: the message spills and takes no sticky SIM there',
      sketch: { messages: [message('m1')], sticky, rateLimits: { d2: perHour(10) }, room: { d2: { room: 0, retryInMs: 5000 } } },
      plan: { m1: 'd1' },
    },
  ]);
});

describe('rule 4, round-robin and failover pools', () => {
  table([
    {
      name: "each message takes the next slot of the user's cursor",
      sketch: { messages: [message('m1'), message('m2'), message('m3')], cursors: { u1: 1 } },
      plan: { m1: 'd2', m2: 'd1', m3: 'd2' },
    },
    {
      name: 'failover pools: a paused device and those a message failed on are left out',
      sketch: { messages: [message('m1', { attemptedDeviceIds: ['d1'] }), message('m2'), message('m3')], pools: { u1: ['d1', 'd2', 'd3'] }, paused: ['d3'] },
      plan: { m1: 'd2', m2: 'd2', m3: 'd1' },
    },
    {
      name: 'the device a lapsed message left is skipped while another is there',
      sketch: { messages: [message('m1', { previousDeviceId: 'd1' })] },
      plan: { m1: 'd2' },
    },
    {
      name: "no available device: the message waits for the job's back-off",
      sketch: { messages: [message('m1', { userId: 'u2' })] },
      plan: { m1: 'wait (no_device)' },
    },
    {
      name: "encrypted pool: an encrypted message goes to the user's SMS Gate phones only",
      sketch: {
        messages: [message('m1', { encrypted: true }), message('m2', { encrypted: true }), message('m3')],
        pools: { u1: ['d1', 'd2'], 'u1:sms_gate': ['d2'] },
      },
      plan: { m1: 'd2', m2: 'd2', m3: 'd1' },
    },
    {
      name: 'encrypted pool: no SMS Gate phone, no device (another device could not decrypt it)',
      sketch: { messages: [message('m1', { encrypted: true })], pools: { u1: ['d1'] } },
      plan: { m1: 'wait (no_device)' },
    },
  ]);

  it("reserves one slot range per pool from the user's cursor", () => {
    const plan = planRouting(
      snapshot({
        messages: [message('m1'), message('m2', { encrypted: true }), message('m3')],
        pools: { u1: ['d1'], 'u1:sms_gate': ['d1'] },
        cursors: { u1: 7 },
      }),
    );
    expect(plan.reservations.slots).toEqual([
      { pool: 'u1', userId: 'u1', start: 7, count: 2 },
      { pool: 'u1:sms_gate', userId: 'u1', start: 9, count: 1 },
    ]);
  });
});
