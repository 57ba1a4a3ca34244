import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { buildApp } from '@smsgw/api';
import { ApiConfigSchema, loadConfig } from '@smsgw/config';
import { addGroupMembers, createApiKey, createDevice, createGroup, createTemplate, createUser, importContacts } from '@smsgw/db';
import { recreateDatabase } from '@smsgw/db/testing';

/**
 * `pnpm bench:template`: the HTTP time of a send-template to a group of 10,000 contacts (each
 * rendered with its contact's name and a custom variable), median of several runs, on a database
 * of its own (smsgw_bench_template).
 */
const MEMBERS = 10_000;
const RUNS = 7;
const WARMUP = 2;

const databaseUrl = await recreateDatabase(process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres', 'smsgw_bench_template');
const config = loadConfig(ApiConfigSchema, {
  ...process.env,
  DATABASE_URL: databaseUrl,
  QUEUE_PREFIX: `smsgw-bench-${randomBytes(4).toString('hex')}`,
  JWT_SECRET: randomBytes(32).toString('base64url'),
  LOG_LEVEL: 'silent',
  RATE_LIMIT_PER_MINUTE: '100000',
});
const app = await buildApp({ config, logger: false });
const address = await app.listen({ host: '127.0.0.1', port: 0 });
const { db } = app;

const user = await createUser(db, { name: 'bench', monthlyQuota: 1_000_000_000 });
const { key } = await createApiKey(db, { userId: user.id, name: 'bench' });
await createDevice(db, { userId: user.id, name: 'bench-phone' });
const contacts = Array.from({ length: MEMBERS }, (_, i) => ({ name: `Contact ${i}`, phone: `+1555${String(i).padStart(7, '0')}` }));
await importContacts(db, { userId: user.id, contacts });
const group = await createGroup(db, { userId: user.id, name: 'everyone' });
await addGroupMembers(db, { userId: user.id, groupId: group.id, contactIds: [], phones: contacts.map((c) => c.phone) });
const template = await createTemplate(db, { userId: user.id, name: 'code', body: 'Hi {{name}}, your code is {{code}}. Reply STOP to {{phone}} to opt out.' });

const times: number[] = [];
for (let i = 0; i < WARMUP + RUNS; i++) {
  const started = performance.now();
  const res = await fetch(`${address}/api/sms/send-template`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ recipients: [], group_ids: [group.id], template_id: template.id, variables: { code: String(100000 + i) } }),
  });
  const body = (await res.json()) as { recipients_count?: number };
  if (res.status !== 200 || body.recipients_count !== MEMBERS) throw new Error(`send-template failed: ${res.status} ${JSON.stringify(body)}`);
  if (i >= WARMUP) times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
console.log(`send-template to a group of ${MEMBERS} contacts: median ${times[RUNS >> 1]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)}, ${RUNS} runs)`);
await app.dispatchQueue.obliterate({ force: true });
await app.close();
