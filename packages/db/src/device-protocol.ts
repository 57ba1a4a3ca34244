import type { DeviceProtocol } from '@smsgw/core';
import type { Sql } from './sql.ts';
import { DEVICE_TOKEN_PREFIX, hashSecret, sameHash } from './secrets.ts';

/** The device side: token authentication and being seen (docs/devices.md, "Availability"). */
export interface AuthenticatedDevice {
  id: string;
  userId: string;
  enabled: boolean;
  protocol: DeviceProtocol;
  lastSeenAt: Date | null;
  appVersion: string | null;
}

export async function authenticateDevice(sql: Sql, token: string): Promise<AuthenticatedDevice | null> {
  if (!token.startsWith(DEVICE_TOKEN_PREFIX) || token.length > 200) return null;
  const hash = hashSecret(token);
  const { rows } = await sql.query<{
    id: string;
    user_id: string;
    enabled: boolean;
    protocol: AuthenticatedDevice['protocol'];
    last_seen_at: Date | null;
    app_version: string | null;
    token_hash: Buffer;
  }>(
    `SELECT id, user_id, enabled, protocol, last_seen_at, app_version, token_hash
     FROM devices WHERE token_hash = $1 AND deleted_at IS NULL`,
    [Buffer.from(hash)],
  );
  const device = rows[0];
  if (!device || !sameHash(device.token_hash, hash)) return null;
  return {
    id: device.id,
    userId: device.user_id,
    enabled: device.enabled,
    protocol: device.protocol,
    lastSeenAt: device.last_seen_at,
    appVersion: device.app_version,
  };
}

/**
 * Records a device request, at most once per `everyMs` (availability is measured in tens of
 * seconds), and the app version it announced when that changed.
 */
export async function markDeviceSeen(sql: Sql, device: AuthenticatedDevice, now: Date, options: { everyMs?: number; appVersion?: string } = {}): Promise<void> {
  const { everyMs = 5000, appVersion } = options;
  const newVersion = appVersion !== undefined && appVersion !== device.appVersion;
  if (!newVersion && device.lastSeenAt && now.getTime() - device.lastSeenAt.getTime() < everyMs) return;
  await sql.query('UPDATE devices SET last_seen_at = $2, app_version = coalesce($3, app_version) WHERE id = $1', [
    device.id,
    now,
    newVersion ? appVersion : null,
  ]);
  device.lastSeenAt = now;
  if (newVersion) device.appVersion = appVersion;
}

/**
 * The devices hold an event stream (called when one opens, and for every stream's keepalives
 * together). Returns when each device last reported its health (null: never), by which a stream
 * into a device gone silent is found dead (packages/core, `isStreamSilent`). The rows are locked in
 * id order, so that two API processes marking overlapping sets never deadlock.
 */
export async function markStreamsSeen(sql: Sql, deviceIds: string[], now: Date): Promise<Map<string, Date | null>> {
  if (deviceIds.length === 0) return new Map();
  const { rows } = await sql.query<{ id: string; health_reported_at: Date | null }>(
    `UPDATE devices d SET stream_seen_at = greatest(d.stream_seen_at, $2), last_seen_at = greatest(d.last_seen_at, $2)
     FROM (SELECT id FROM devices WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE) locked
     WHERE d.id = locked.id RETURNING d.id, d.health_reported_at`,
    [deviceIds, now],
  );
  return new Map(rows.map((r) => [r.id, r.health_reported_at]));
}

/**
 * The device's last stream on this API process closed (or was found dead). It counts as closed
 * until a stream refreshes `stream_seen_at` past this: one the device holds on another API process
 * does so at its next keepalive (docs/devices.md, "Availability").
 */
export async function markStreamClosed(sql: Sql, deviceId: string, now: Date): Promise<void> {
  await sql.query('UPDATE devices SET stream_closed_at = greatest(stream_closed_at, $2), last_seen_at = greatest(last_seen_at, $2) WHERE id = $1', [
    deviceId,
    now,
  ]);
}

/** Of `ids`, those that are messages currently handled by the device. */
export async function messagesOfDevice(sql: Sql, options: { deviceId: string; ids: string[] }): Promise<Set<string>> {
  if (options.ids.length === 0) return new Set();
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM messages WHERE id = ANY($1::uuid[]) AND device_id = $2', [options.ids, options.deviceId]);
  return new Set(rows.map((r) => r.id));
}
