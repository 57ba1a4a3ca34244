import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { SmsgwClient } from '@smsgw/client';
import { createDevice, type Db } from '@smsgw/db';
// The scripted modem and the relay live with the agent they test; relative paths, as the root package does not depend on the agent.
import { FakeModem, PtyPair, readSubmit } from '../../apps/modem-agent/src/testing/fake-modem.ts';
import { TcpRelay } from '../../apps/modem-agent/src/testing/tcp-relay.ts';
import type { Cluster } from '../support/cluster.ts';
import { e2eForAll } from '../support/e2e-fixture.ts';

/**
 * Late status reports from a USB modem (issue 24): the real API, one dispatcher and the modem agent
 * as a real process (dist/modem-agent.mjs) on a socat pseudo-terminal, with a scripted modem in this
 * process whose status reports the test holds back, and a relay in front of the API that can cut
 * smsgw off for the agent only. The agent polls every 10 minutes: a report that waited for a poll
 * would fail every test here.
 */
let db: Db;
let modem: FakeModem;
let relay: TcpRelay;
let cluster: Cluster;
let client: SmsgwClient;
let agentEnv: Record<string, string>;

e2eForAll(
  'modem-reports',
  async (e2e) => {
    db = e2e.db;
    const { user, key } = await e2e.user('modem-reports-e2e', 100_000);
    const device = await createDevice(db, { userId: user.id, name: 'modem' });
    // Torn down after the processes: the agent stops before its port vanishes.
    const pty = new PtyPair(e2e.logDir);
    await pty.start();
    e2e.defer(() => pty.stop());
    modem = await FakeModem.open(pty.modem);
    e2e.defer(() => modem.close());
    // Closed once the agent has stopped, which might otherwise try smsgw again on the way out.
    e2e.defer(() => relay?.cut());
    // Keepalives every 5 s: an agent waiting for a late report sees its idle event stream carry several.
    cluster = await e2e.startCluster({ dispatchers: 1, env: { WORKER_LOCK_SECONDS: '3', SWEEP_INTERVAL_SECONDS: '2', DEVICE_HEARTBEAT_SECONDS: '5' } });
    const { hostname, port } = new URL(cluster.baseUrl);
    relay = new TcpRelay({ host: hostname, port: Number(port) });
    await relay.open();
    agentEnv = {
      SMSGW_URL: relay.url,
      MODEM_PORT: pty.agent,
      SMSGW_DEVICE_TOKEN: device.token,
      MODEM_STATE_FILE: join(e2e.logDir, 'modem-state.json'),
      MODEM_POLL_SECONDS: '600',
      MODEM_RETRY_MAX_MS: '1000',
      LOG_LEVEL: 'info',
    };
    await cluster.startModemAgent('modem', agentEnv, 1);
    await vi.waitFor(() => expect(agentLogs().some((l) => l.msg === 'modem ready')).toBe(true), { timeout: 10_000 });
    client = new SmsgwClient(cluster.baseUrl, key);
  },
  90_000,
);

function agentLogs(): { msg: string; id?: string; time: number }[] {
  return cluster.output('modem').flatMap((line) => {
    try {
      return [JSON.parse(line)];
    } catch {
      return [];
    }
  });
}

async function stateOf(id: string): Promise<string> {
  return (await db.message.findUniqueOrThrow({ where: { id } })).state;
}

async function sendTo(body: string, count = 1): Promise<{ id: string; to: string }[]> {
  const recipients = Array.from({ length: count }, () => `+1555${String(randomBytes(4).readUInt32BE() % 10_000_000).padStart(7, '0')}`);
  const { message_ids } = await client.send({ recipients, body });
  return message_ids.map((id, i) => ({ id, to: recipients[i]! }));
}

async function waitForState(id: string, state: string, timeout: number): Promise<void> {
  await vi.waitFor(async () => expect(await stateOf(id)).toBe(state), { timeout, interval: 25 });
}

/** The references the modem gave the parts submitted to `to`, in part order. */
function referencesTo(to: string): number[] {
  return modem.submitted
    .map((s) => ({ mr: s.mr, ...readSubmit(s.pdu) }))
    .filter((s) => s.to === to)
    .sort((a, b) => a.part - b.part)
    .map((s) => s.mr);
}

/** Writes the delivered status report for `mr` and returns how long smsgw took to show `id` delivered. */
async function reportDelivered(id: string, mr: number): Promise<number> {
  const reported = Date.now();
  modem.statusReport(mr, 0);
  await waitForState(id, 'delivered', 5_000);
  return Date.now() - reported;
}

/** What the agent's state file holds about the messages `ids`. */
async function stateFile(ids: string[]): Promise<{ id: string; phase: string; deliveredRefs: number[] }[]> {
  const { submissions } = JSON.parse(await readFile(agentEnv.MODEM_STATE_FILE!, 'utf8')) as {
    submissions: { id: string; phase: string; deliveredRefs: number[] }[];
  };
  return submissions.filter((s) => ids.includes(s.id));
}

describe('a modem agent with late status reports', () => {
  // Issue 24 asked for 0, 3 and 30 s, 30 s being the poll interval then. With MODEM_POLL_SECONDS at 600
  // no hold reaches a poll; what an idle agent meets while a report is held back is its event stream's
  // keepalives (every 5 s here: 12 s spans two, as 30 s did at the default 15). Its keep-alive
  // connection to the API outlives either hold (the API's Keep-Alive is 72 s).
  it('shows a message delivered within 2 s of its status report held back 0 s, 3 s or 12 s, the agent otherwise idle', async () => {
    const messages = await sendTo('Your code is 4711.', 3);
    await Promise.all(messages.map(({ id }) => waitForState(id, 'sent', 10_000)));
    const latencies = await Promise.all(
      [0, 3_000, 12_000].map(async (hold, i) => {
        const { id, to } = messages[i]!;
        await sleep(hold);
        return reportDelivered(id, referencesTo(to)[0]!);
      }),
    );
    expect(latencies.map((ms) => ms < 2_000)).toEqual([true, true, true]);
  }, 60_000);

  it("shows a 3-part message delivered when the last part's late report comes, and not before", async () => {
    const text = 'Your parcel left our warehouse this morning and will reach you tomorrow between 9:00 and 13:00. '.repeat(4);
    const [{ id, to }] = (await sendTo(text)) as [{ id: string; to: string }];
    await waitForState(id, 'sent', 10_000);
    const refs = referencesTo(to);
    expect(refs).toHaveLength(3);
    for (const mr of refs.slice(0, 2)) {
      await sleep(1_000);
      modem.statusReport(mr, 0);
    }
    await vi.waitFor(async () => expect((await stateFile([id]))[0]?.deliveredRefs).toHaveLength(2));
    await sleep(1_000);
    expect(await stateOf(id)).toBe('sent');
    expect(await reportDelivered(id, refs[2]!)).toBeLessThan(2_000);
  }, 30_000);

  it('keeps a report smsgw did not take in the state file across a kill, delivers it after the restart, and a late one after that', async () => {
    const [early, late] = (await sendTo('Your table is ready.', 2)) as [{ id: string; to: string }, { id: string; to: string }];
    await Promise.all([waitForState(early.id, 'sent', 10_000), waitForState(late.id, 'sent', 10_000)]);

    await relay.cut();
    modem.statusReport(referencesTo(early.to)[0]!, 0);
    await vi.waitFor(() => expect(agentLogs().some((l) => l.msg === 'message delivered' && l.id === early.id)).toBe(true), { timeout: 5_000 });
    expect(Object.fromEntries((await stateFile([early.id, late.id])).map((s) => [s.id, s.phase]))).toEqual({ [early.id]: 'final', [late.id]: 'sent' });
    await cluster.kill('modem', 'SIGKILL');
    expect(await stateOf(early.id)).toBe('sent');

    // Started again while smsgw is still out of reach; it comes back once the modem is ready.
    const before = agentLogs().length;
    await cluster.startModemAgent('modem', agentEnv, 1);
    await vi.waitFor(
      () =>
        expect(
          agentLogs()
            .slice(before)
            .some((l) => l.msg === 'modem ready'),
        ).toBe(true),
      { timeout: 10_000 },
    );
    await relay.open();
    const back = Date.now();
    await waitForState(early.id, 'delivered', 5_000);
    expect(Date.now() - back).toBeLessThan(2_000);

    // The other message's report comes 3 s later, to an agent that has nothing else to do.
    await sleep(3_000);
    expect(await reportDelivered(late.id, referencesTo(late.to)[0]!)).toBeLessThan(2_000);
    await vi.waitFor(async () => expect(await stateFile([early.id, late.id])).toEqual([]));
  }, 30_000);
});
