import type { RoutingMessage, StickyDevice } from './snapshot.ts';

/**
 * Sticky sender (docs/decisions.md, "Sticky sender"): a recipient keeps the device (and SIM) that
 * last sent to it or received from it, while that device may take the message now (it is in the
 * pool the routing policy left, it is not the one the message just left, and the message never
 * failed on it); otherwise the message goes to round-robin, and the device it gets becomes the
 * sticky one when it is assigned. An encrypted message has none (its recipient is no phone number).
 */
export function stickyChoices(
  messages: Pick<RoutingMessage, 'id' | 'userId' | 'previousDeviceId'>[],
  sticky: Map<string, StickyDevice>,
  pools: Map<string, string[]>,
): Map<string, StickyDevice> {
  const chosen = new Map<string, StickyDevice>();
  for (const m of messages) {
    const device = sticky.get(m.id);
    const pool = pools.get(m.userId) ?? [];
    if (!device || !pool.includes(device.deviceId)) continue;
    if (device.deviceId === m.previousDeviceId && pool.length > 1) continue;
    chosen.set(m.id, device);
  }
  return chosen;
}

/** The messages that go to their sticky device, and the rest (to round-robin). */
export function pickSticky(
  messages: RoutingMessage[],
  sticky: Map<string, StickyDevice>,
  pools: Map<string, string[]>,
): { picks: { id: string; deviceId: string }[]; rest: RoutingMessage[]; choices: Map<string, StickyDevice> } {
  const choices = stickyChoices(messages, sticky, pools);
  // Failover: a message never goes back to a device it failed on, sticky or not.
  for (const m of messages) if (m.attemptedDeviceIds.includes(choices.get(m.id)?.deviceId ?? '')) choices.delete(m.id);
  return {
    picks: messages.filter((m) => choices.has(m.id)).map((m) => ({ id: m.id, deviceId: choices.get(m.id)!.deviceId })),
    rest: messages.filter((m) => !choices.has(m.id)),
    choices,
  };
}

/**
 * The sticky SIM of each assignment that stayed on its sticky device (another device gets its own
 * default), unless a carrier budget picked the SIM already (it keeps the SIM within its limits).
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
