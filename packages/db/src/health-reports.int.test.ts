import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId, PING_EVENT_TYPE } from '@smsgw/core';
import { recordHealthReports } from './device-health.ts';
import { createSql, type Sql } from './sql.ts';
import { createTestDatabase, type TestDatabase } from './testing/test-database.ts';

// Devices' reports of themselves, many in one statement (the API writes the pings and heartbeats
// that arrive together so): each device gets its own fields, a field it did not send is kept, and
// each is due at most one `system:ping` delivery per ping interval.
let database: TestDatabase;
let sql: Sql;
let userId: string;
let webhookId: string;
const devices: string[] = [];
beforeAll(async () => {
  database = await createTestDatabase(inject('databaseUrl'), inject('templateDatabase'));
  sql = createSql({ url: database.url, poolSize: 4 });
  userId = newId();
  await sql.query(`INSERT INTO users (id, name) VALUES ($1, $2)`, [userId, `health-${userId}`]);
  for (let i = 0; i < 4; i++) {
    const id = newId();
    await sql.query(`INSERT INTO devices (id, user_id, name, token_hash, enabled, battery_level, network) VALUES ($1, $2, $3, $4, true, 50, 'wifi')`, [
      id,
      userId,
      `d${i}`,
      randomBytes(32),
    ]);
    devices.push(id);
  }
  webhookId = newId();
  await sql.query(`INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, 'https://hooks.example/ping', $3, 'secret-of-the-hook')`, [
    webhookId,
    userId,
    [PING_EVENT_TYPE],
  ]);
});
afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

const health = async (id: string) =>
  (await sql.query('SELECT battery_level, battery_charging, signal_dbm, network, health_reported_at FROM devices WHERE id = $1', [id])).rows[0];

describe('recordHealthReports', () => {
  it('writes each device its own fields in one statement, keeping the fields it did not send', async () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    const [a, b, c] = devices as [string, string, string];
    await recordHealthReports(
      sql,
      [
        { deviceId: a, report: { batteryLevel: 80, batteryCharging: true } },
        { deviceId: b, report: { signalDbm: -70, network: 'cellular' } },
        { deviceId: c, report: {} },
      ],
      now,
      60,
    );
    expect(await health(a)).toEqual({ battery_level: 80, battery_charging: true, signal_dbm: null, network: 'wifi', health_reported_at: now });
    expect(await health(b)).toEqual({ battery_level: 50, battery_charging: null, signal_dbm: -70, network: 'cellular', health_reported_at: now });
    expect(await health(c)).toEqual({ battery_level: 50, battery_charging: null, signal_dbm: null, network: 'wifi', health_reported_at: now });
  });

  it('takes two reports of one device together, the later one’s fields first', async () => {
    const d = devices[3]!;
    await recordHealthReports(
      sql,
      [
        { deviceId: d, report: { batteryLevel: 30, network: 'cellular' } },
        { deviceId: d, report: { batteryLevel: 29, signalDbm: -90 } },
      ],
      new Date(),
      60,
    );
    expect(await health(d)).toMatchObject({ battery_level: 29, signal_dbm: -90, network: 'cellular' });
  });

  it('makes one ping delivery per device per interval, however many reports', async () => {
    await sql.query('DELETE FROM webhook_deliveries');
    const now = new Date();
    const first = await recordHealthReports(
      sql,
      devices.map((deviceId) => ({ deviceId, report: { batteryLevel: 70 } })),
      now,
      60,
    );
    expect(first).toHaveLength(devices.length);
    const again = await recordHealthReports(
      sql,
      devices.map((deviceId) => ({ deviceId, report: { batteryLevel: 71 } })),
      new Date(now.getTime() + 30_000),
      60,
    );
    expect(again).toEqual([]);
    const { rows } = await sql.query<{ device_id: string }>(`SELECT data->>'device_id' AS device_id FROM webhook_deliveries WHERE webhook_id = $1`, [
      webhookId,
    ]);
    expect(rows.map((r) => r.device_id).sort()).toEqual([...devices].sort());
  });
});
