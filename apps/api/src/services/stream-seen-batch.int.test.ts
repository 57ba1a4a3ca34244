import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '@smsgw/db';
import { createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';
import { StreamSeenBatch } from './stream-seen-batch.ts';

let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('the keepalives of the streams on one API process', () => {
  it('refresh every device whose keepalive came due within the interval in one statement, each told when it last reported', async () => {
    const { devices } = await createTestUser(api.db, { devices: 3 });
    const reportedAt = new Date('2026-03-01T10:00:00.000Z');
    await api.db.device.update({ where: { id: devices[0]!.id }, data: { healthReportedAt: reportedAt } });
    let statements = 0;
    const sql = new Proxy(api.sql, {
      get: (pool, key) => {
        if (key !== 'query') return Reflect.get(pool, key);
        return (...args: Parameters<Sql['query']>) => {
          statements++;
          return pool.query(...args);
        };
      },
    });
    const batch = new StreamSeenBatch({ sql, incidents: api.app.incidents }, 200);
    const before = new Date();

    // The first device has two streams: each is told.
    const told = await Promise.all(
      [devices[0]!, devices[0]!, devices[1]!, devices[2]!].map((d) => new Promise<Date | null>((resolve) => batch.mark(d.id, resolve))),
    );

    expect(statements).toBe(1);
    expect(told).toEqual([reportedAt, reportedAt, null, null]);
    const rows = await api.db.device.findMany({ where: { id: { in: devices.map((d) => d.id) } } });
    for (const row of rows) expect(row.streamSeenAt!.getTime()).toBeGreaterThanOrEqual(before.getTime());
    batch.close();
  });
});
