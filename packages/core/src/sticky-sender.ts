/**
 * Sticky sender (docs/decisions.md, "Sticky sender"): a recipient keeps the device (and SIM) that
 * last sent to it or received from it, while that device may take the message now (it is in the
 * pool the routing policy left); otherwise the message goes to round-robin, and the device it gets
 * becomes the sticky one when it is assigned.
 */
export interface StickyDevice {
  deviceId: string;
  simNumber: number | null;
}

export interface StickyCandidate {
  id: string;
  userId: string;
  /** The device of a lapsed assignment: never chosen again while the user has another. */
  previousDeviceId: string | null;
}

/**
 * The sticky choice of each message that has one: its sticky device when that device is in the
 * user's pool of devices that may take messages now (and is not the one the message just left).
 */
export function stickyChoices(
  messages: StickyCandidate[],
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
