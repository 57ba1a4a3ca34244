import type { RedisClient } from './topology.ts';

/**
 * Wake-ups travel from the dispatchers to whichever API process holds a device's event stream
 * through one Redis pub/sub channel per queue prefix; the message is the device id.
 */
export function wakeupChannel(prefix: string): string {
  return `${prefix}:wakeups`;
}

/**
 * Cancels for SMS Gate phones travel the same way, on a channel of their own; the message is
 * `<device id> <message id>` (real-devices.md §2b.11: the phone gets `MessageCancelled`).
 */
export function cancelChannel(prefix: string): string {
  return `${prefix}:cancels`;
}

/** Tells each message's phone to cancel it (one publish per message, in one round trip). */
export async function publishCancels(redis: RedisClient, prefix: string, cancels: readonly { id: string; deviceId: string }[]): Promise<void> {
  if (cancels.length === 0) return;
  const pipeline = redis.pipeline();
  for (const { id, deviceId } of cancels) pipeline.publish(cancelChannel(prefix), `${deviceId} ${id}`);
  await pipeline.exec();
}

/**
 * "Your settings changed" for SMS Gate phones, on a channel of its own; the message is a device id
 * (the phone gets `SettingsUpdated` and fetches `GET /mobile/v1/settings` again).
 */
export function settingsChannel(prefix: string): string {
  return `${prefix}:settings`;
}

/** Tells each device its settings changed (one publish per device, in one round trip). */
export async function publishSettingsUpdated(redis: RedisClient, prefix: string, deviceIds: readonly string[]): Promise<void> {
  if (deviceIds.length === 0) return;
  const pipeline = redis.pipeline();
  for (const id of deviceIds) pipeline.publish(settingsChannel(prefix), id);
  await pipeline.exec();
}

/** The round-robin cursor of a user, shared by every dispatcher process. */
export function roundRobinKey(prefix: string, userId: string): string {
  return `${prefix}:rr:${userId}`;
}

/** Wakes each device (one publish per device, in one round trip). */
export async function publishWakeups(redis: RedisClient, prefix: string, deviceIds: Iterable<string>): Promise<void> {
  const channel = wakeupChannel(prefix);
  const pipeline = redis.pipeline();
  let count = 0;
  for (const id of deviceIds) {
    pipeline.publish(channel, id);
    count++;
  }
  if (count > 0) await pipeline.exec();
}

/**
 * Wakes each device again unless it was woken again within `everyMs` (a key per device, shared by
 * every dispatcher); returns how many were woken.
 */
export async function wakeDevicesAgain(redis: RedisClient, prefix: string, deviceIds: string[], everyMs: number): Promise<number> {
  if (deviceIds.length === 0) return 0;
  const pipeline = redis.pipeline();
  for (const id of deviceIds) pipeline.set(`${prefix}:woken-again:${id}`, '1', 'PX', everyMs, 'NX');
  const results = (await pipeline.exec()) ?? [];
  const due = deviceIds.filter((_, i) => results[i]?.[1] === 'OK');
  await publishWakeups(redis, prefix, due);
  return due.length;
}
