import type { RoutingMessage } from '../snapshot.ts';

/** The planner tests' clock, and a pending message of user `u1` built from overrides (tests of the planner and of what feeds it). */
export const NOW = new Date('2026-03-10T12:00:20.000Z');

export function message(id: string, overrides: Partial<RoutingMessage> = {}): RoutingMessage {
  return {
    id,
    userId: 'u1',
    requestedDeviceId: null,
    requestedDeviceGone: false,
    requestedSim: null,
    previousDeviceId: null,
    attemptedDeviceIds: [],
    sendAt: null,
    validUntil: null,
    createdAt: new Date(NOW.getTime() - 1000),
    priority: 0,
    encrypted: false,
    segments: 1,
    to: `+4477009000${id.replace(/\D/g, '').padStart(2, '0')}`,
    ...overrides,
  };
}
