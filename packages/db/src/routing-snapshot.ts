import { encryptedPool, type AvailabilityWindows, type RoutingMessage, type RoutingSnapshot } from '@smsgw/core';
import { availableDevices } from './availability.ts';
import { deviceBudgetLimits } from './device-budgets.ts';
import { pausedDevices } from './failover.ts';
import { deviceRateLimits } from './pacing.ts';
import type { Sql } from './sql.ts';
import { stickyDevicesOf } from './sticky-senders.ts';

/** The routing snapshot less the shared counters (Redis's): what Postgres says of a batch. */
export type RoutingRecord = Omit<RoutingSnapshot, 'counters'>;

/**
 * Reads what the routing planner (@smsgw/core, `planRouting`) decides a batch from: the batch's
 * pending messages, their users' available devices (and SMS Gate phones, for encrypted messages),
 * paused devices, sticky devices, and the devices' rate limits and budgets. Four round trips per
 * batch, whatever its size: the messages, then three statements at once, then two.
 */
export async function loadRoutingSnapshot(
  sql: Sql,
  options: { ids: string[]; now: Date; windows: AvailabilityWindows; maxQueueSeconds: number },
): Promise<RoutingRecord> {
  const { now, windows } = options;
  const messages = await pendingMessages(sql, [...new Set(options.ids)]);
  const roundRobin = messages.filter((m) => !m.requestedDeviceId);
  const usersOf = (list: RoutingMessage[]) => [...new Set(list.map((m) => m.userId))];
  const [devices, phones, paused, sticky] = await Promise.all([
    availableDevices(sql, { userIds: usersOf(roundRobin), windows }),
    availableDevices(sql, { userIds: usersOf(roundRobin.filter((m) => m.encrypted)), windows, protocol: 'sms_gate' }),
    pausedDevices(sql, { userIds: usersOf(roundRobin), now }),
    stickyDevicesOf(
      sql,
      roundRobin.map((m) => m.id),
    ),
  ]);
  const pools = new Map([...devices, ...[...phones].map(([userId, pool]) => [encryptedPool(userId), pool] as const)]);
  const candidates = [...new Set([...messages.flatMap((m) => (m.requestedDeviceId ? [m.requestedDeviceId] : [])), ...[...pools.values()].flat()])];
  const [rateLimits, budgets] = await Promise.all([deviceRateLimits(sql, candidates), deviceBudgetLimits(sql, candidates)]);
  return { now, maxQueueSeconds: options.maxQueueSeconds, messages, pools, paused, sticky, rateLimits, budgets };
}

async function pendingMessages(sql: Sql, ids: string[]): Promise<RoutingMessage[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql.query<{
    id: string;
    user_id: string;
    requested_device_id: string | null;
    device_id: string | null;
    gone: boolean;
    send_at: Date | null;
    valid_until: Date | null;
    created_at: Date;
    attempted: string[];
    priority: number;
    is_encrypted: boolean;
    segments: number;
    to_number: string;
    sim: number | null;
  }>(
    // A SIM smsgw picked (sim_picked) counts as none: a later assignment chooses again.
    `SELECT m.id, m.user_id, m.requested_device_id, m.device_id, (d.deleted_at IS NOT NULL) AS gone, m.send_at, m.valid_until, m.created_at,
       m.priority, m.is_encrypted, m.segments, m.to_number, CASE WHEN m.sim_picked THEN NULL ELSE m.sim_number END AS sim,
       ARRAY(SELECT a->>'device_id' FROM jsonb_array_elements(m.attempts) AS a) AS attempted
     FROM messages m LEFT JOIN devices d ON d.id = m.requested_device_id
     WHERE m.id = ANY($1::uuid[]) AND m.state = 'pending'`,
    [ids],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  // In the batch's order: the first come are the first served.
  return ids.flatMap((id) => {
    const r = byId.get(id);
    return r
      ? [
          {
            id: r.id,
            userId: r.user_id,
            requestedDeviceId: r.requested_device_id,
            requestedDeviceGone: r.gone === true,
            requestedSim: r.sim,
            previousDeviceId: r.device_id,
            attemptedDeviceIds: r.attempted,
            sendAt: r.send_at,
            validUntil: r.valid_until,
            createdAt: r.created_at,
            priority: r.priority,
            encrypted: r.is_encrypted,
            segments: r.segments,
            to: r.to_number,
          },
        ]
      : [];
  });
}
