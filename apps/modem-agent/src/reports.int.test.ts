/**
 * Status reports that come while the agent is idle (issue 24): the agent in this process, a fake modem
 * on a socat pseudo-terminal, the real API and dispatcher, and a relay that cuts smsgw off for the
 * agent only. Polls are 10 minutes apart, so nothing here waits for one.
 */
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { send, uniquePhone } from '@smsgw/api/testing';
import { startHarness, startWorld, type Harness, type World } from './testing/harness.ts';
import { TcpRelay } from './testing/tcp-relay.ts';

let world: World;
let h: Harness | undefined;
let relay: TcpRelay | undefined;
beforeAll(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await h?.close();
  await relay?.cut();
  h = relay = undefined;
});
afterAll(async () => {
  await world?.close();
});

async function stateOf(harness: Harness, id: string): Promise<string> {
  return (await harness.api.db.message.findUniqueOrThrow({ where: { id } })).state;
}

describe('modem agent: late status reports', () => {
  it('reports a status report that comes while it is idle at once, not at its next poll', async () => {
    h = await startHarness(world);
    h.startAgent({ MODEM_POLL_SECONDS: '600' });
    await vi.waitFor(() => expect(h!.logs.some((l) => l.msg === 'modem ready')).toBe(true), { timeout: 10_000 });
    const res = await send(h.api.app, h.user.apiKey, { recipients: [uniquePhone()], body: 'late report' });
    const id = res.json().message_ids[0] as string;
    await vi.waitFor(async () => expect(await stateOf(h!, id)).toBe('sent'), { timeout: 10_000, interval: 50 });
    // The network's report comes a second later, when the round that sent the message is long over.
    await sleep(1_000);

    const reported = Date.now();
    h.modem.statusReport(h.modem.submitted[0]!.mr, 0);
    await vi.waitFor(async () => expect(await stateOf(h!, id)).toBe('delivered'), { timeout: 2_000, interval: 20 });
    expect(Date.now() - reported).toBeLessThan(1_000);
    await vi.waitFor(async () => expect(JSON.parse(await readFile(h!.stateFile, 'utf8')).submissions).toEqual([]));
  });

  it('sends reports that come together in one request, tries again with growing pauses while smsgw is unreachable, and delivers them once it is back', async () => {
    h = await startHarness(world);
    const { hostname, port } = new URL(world.baseUrl);
    relay = new TcpRelay({ host: hostname, port: Number(port) });
    await relay.open();
    h.startAgent({ SMSGW_URL: relay.url, MODEM_POLL_SECONDS: '600', MODEM_RETRY_MAX_MS: '1000' });
    await vi.waitFor(() => expect(h!.logs.some((l) => l.msg === 'modem ready')).toBe(true), { timeout: 10_000 });
    const res = await send(h.api.app, h.user.apiKey, { recipients: [uniquePhone(), uniquePhone()], body: 'through an outage' });
    const ids = res.json().message_ids as string[];
    await vi.waitFor(async () => expect(await Promise.all(ids.map((id) => stateOf(h!, id)))).toEqual(['sent', 'sent']), { timeout: 10_000, interval: 50 });

    await relay.cut();
    h.modem.statusReport(h.modem.submitted[0]!.mr, 0);
    h.modem.statusReport(h.modem.submitted[1]!.mr, 0);
    const failures = () =>
      h!.logs.filter((l) => l.msg === 'reports not accepted; trying again later') as unknown as { time: number; count: number; retryInMs: number }[];
    await vi.waitFor(() => expect(failures().length).toBeGreaterThanOrEqual(4), { timeout: 5_000 });
    // Both reports in each attempt, pauses of 250, 500, 1000 then 1000 ms (MODEM_RETRY_MAX_MS).
    const attempts = failures().slice(0, 4);
    expect(attempts.map((f) => [f.count, f.retryInMs])).toEqual([
      [2, 250],
      [2, 500],
      [2, 1000],
      [2, 1000],
    ]);
    const gaps = attempts.slice(1).map((f, i) => f.time - attempts[i]!.time);
    expect(gaps.map((gap, i) => gap >= [250, 500, 1000][i]! - 20)).toEqual([true, true, true]);
    expect(await Promise.all(ids.map((id) => stateOf(h!, id)))).toEqual(['sent', 'sent']);
    const held = JSON.parse(await readFile(h.stateFile, 'utf8')) as { submissions: { id: string; phase: string }[] };
    expect(held.submissions.map((s) => s.phase)).toEqual(['final', 'final']);

    await relay.open();
    const back = Date.now();
    await vi.waitFor(async () => expect(await Promise.all(ids.map((id) => stateOf(h!, id)))).toEqual(['delivered', 'delivered']), {
      timeout: 3_000,
      interval: 20,
    });
    expect(Date.now() - back).toBeLessThan(1_500);
    await vi.waitFor(async () => expect(JSON.parse(await readFile(h!.stateFile, 'utf8')).submissions).toEqual([]));
  });
});
