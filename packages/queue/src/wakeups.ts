/**
 * Wake-ups travel from the dispatchers to whichever API process holds a device's event stream
 * through one Redis pub/sub channel per queue prefix; the message is the device id.
 */
export function wakeupChannel(prefix: string): string {
  return `${prefix}:wakeups`;
}

/** The round-robin cursor of a user, shared by every dispatcher process. */
export function roundRobinKey(prefix: string, userId: string): string {
  return `${prefix}:rr:${userId}`;
}
