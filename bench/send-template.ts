import { performance } from 'node:perf_hooks';
import { addGroupMembers, createGroup, createTemplate, importContacts } from '@smsgw/db';
import { startBenchApi } from './bench-api.ts';

/**
 * `pnpm bench:template`: the HTTP time of a send-template to a group of 10,000 contacts (each
 * rendered with its contact's name and a custom variable), median of several runs, on a database
 * of its own (smsgw_bench_template).
 */
const MEMBERS = 10_000;
const RUNS = 7;
const WARMUP = 2;

const bench = await startBenchApi('smsgw_bench_template');
const { app, address, user, apiKey: key } = bench;
const { sql } = app;

const contacts = Array.from({ length: MEMBERS }, (_, i) => ({ name: `Contact ${i}`, phone: `+1555${String(i).padStart(7, '0')}` }));
await importContacts(sql, { userId: user.id, contacts });
const group = await createGroup(sql, { userId: user.id, name: 'everyone' });
await addGroupMembers(sql, { userId: user.id, groupId: group.id, contactIds: [], phones: contacts.map((c) => c.phone) });
const template = await createTemplate(sql, { userId: user.id, name: 'code', body: 'Hi {{name}}, your code is {{code}}. Reply STOP to {{phone}} to opt out.' });

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
console.log(
  `send-template to a group of ${MEMBERS} contacts: median ${times[RUNS >> 1]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times.at(-1)!.toFixed(1)}, ${RUNS} runs)`,
);
await bench.close();
