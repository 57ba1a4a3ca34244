import { stickyChoices, type StickyDevice } from '@smsgw/core';
import { stickyDevicesOf, type PendingMessage, type Sql } from '@smsgw/db/sql';

export interface StickyPicks {
  /** Messages that go to their recipient's sticky device. */
  assignments: { id: string; deviceId: string }[];
  /** The messages left to round-robin. */
  rest: PendingMessage[];
  /** The sticky choice of each message, for its SIM once pacing settled the device. */
  choices: Map<string, StickyDevice>;
}

/**
 * Sticky sender (docs/decisions.md): the round-robin messages whose recipient has a sticky device
 * that may take them now go to it; the routing policy is @smsgw/core's `stickyChoices`, fed here
 * with one query per batch.
 */
export async function pickSticky(sql: Sql, messages: PendingMessage[], pools: Map<string, string[]>): Promise<StickyPicks> {
  const choices = stickyChoices(messages, await stickyDevicesOf(sql, messages.map((m) => m.id)), pools);
  // Failover: a message never goes back to a device it failed on, sticky or not.
  for (const m of messages) if (m.attemptedDeviceIds.includes(choices.get(m.id)?.deviceId ?? '')) choices.delete(m.id);
  return {
    assignments: messages.filter((m) => choices.has(m.id)).map((m) => ({ id: m.id, deviceId: choices.get(m.id)!.deviceId })),
    rest: messages.filter((m) => !choices.has(m.id)),
    choices,
  };
}

/**
 * The sticky SIM of each assignment that pacing left on its sticky device (another device gets its
 * own default), unless a carrier budget picked the SIM already (it keeps the SIM within its limits).
 */
export function withStickySims<A extends { id: string; deviceId: string; simNumber?: number | null }>(
  assignments: A[],
  choices: Map<string, StickyDevice>,
): (A & { simNumber: number | null })[] {
  return assignments.map((a) => {
    const choice = choices.get(a.id);
    return { ...a, simNumber: a.simNumber ?? (choice && choice.deviceId === a.deviceId ? choice.simNumber : null) };
  });
}
