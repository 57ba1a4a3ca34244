import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { buildApp } from '../apps/api/src/app.ts';
import { ApiConfigSchema, loadConfig } from '@smsgw/config';
import { createApiKey, createDevice, createUser, inTransaction } from '@smsgw/db';
const config = loadConfig(ApiConfigSchema, {
  DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/smsgw_bench',
  JWT_SECRET: randomBytes(32).toString('hex'),
  LOG_LEVEL: 'silent',
  QUEUE_PREFIX: 'probe',
});
const app = await buildApp({ config, logger: false });
const user = await createUser(app.sql, { name: 'p', monthlyQuota: 1e9 });
const { key } = await createApiKey(app.sql, { userId: user.id, name: 'p' });
await createDevice(app.sql, { userId: user.id, name: 'x' });
const t = async (label: string, fn: () => Promise<unknown>) => {
  const xs = [];
  for (let i = 0; i < 15; i++) {
    const s = performance.now();
    await fn();
    xs.push(performance.now() - s);
  }
  xs.sort((a, b) => a - b);
  console.log(label, xs[7]!.toFixed(2));
};
await t('health', () => app.inject({ url: '/health' }));
await t('quota (auth+1 query)', () => app.inject({ url: '/api/v1/quota', headers: { 'x-api-key': key } }));
await t('select1', () => app.sql.query('SELECT 1'));
await t('empty tx', () =>
  inTransaction(app.sql, async (tx) => {
    await tx.query('SELECT 1');
  }),
);
await t('send 1', () =>
  app.inject({ method: 'POST', url: '/api/sms/send', headers: { 'x-api-key': key }, payload: { recipients: ['+15550001111'], body: 'x' } }),
);
await t('addBulk 1', () => app.dispatchQueue.addBulk([{ name: 'x', data: {} }]));
await app.dispatchQueue.obliterate({ force: true });
await app.close();
