/**
 * Incoming SMS through the agent: from the fake modem's SIM to `GET /api/v1/sms/received` of the
 * real API, each once, the slot deleted only after smsgw took it; bad input skipped.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { Deliver } from 'node-pdu';
import { call } from '@smsgw/api/testing';
import { startHarness, startWorld, type Harness, type World } from './testing/harness.ts';

let world: World;
let h: Harness | undefined;
beforeAll(async () => {
  world = await startWorld();
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});
afterAll(async () => {
  await world?.close();
});

async function received(harness: Harness): Promise<{ from: string; message: string }[]> {
  const res = await call(harness.api.app, harness.user.apiKey, 'GET', '/api/v1/sms/received?limit=100');
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

async function started(options: Parameters<typeof startHarness>[1] = {}): Promise<Harness> {
  const harness = await startHarness(world, options);
  harness.startAgent();
  await vi.waitFor(() => expect(harness.modem.commands).toContain('AT+CMGL=4'), { timeout: 10_000 });
  return harness;
}

const LONG = 'This incoming message is longer than one SMS, so the network delivers it in two parts that the agent joins. '.repeat(2);

describe('modem agent: receiving', () => {
  it('forwards a single and a 2-part SMS once each and deletes their slots only after smsgw took them', async () => {
    h = await started();
    h.modem.receive('+447700900111', 'Hello from a phone');
    const slots = h.modem.receive('+447700900222', LONG);
    expect(slots).toHaveLength(2);
    await vi.waitFor(async () => expect(await received(h!)).toHaveLength(2), { timeout: 10_000 });
    const messages = await received(h);
    expect(messages.map((m) => [m.from, m.message]).sort()).toEqual([
      ['+447700900111', 'Hello from a phone'],
      ['+447700900222', LONG],
    ]);
    await vi.waitFor(() => expect(h!.modem.stored.size).toBe(0));
    // Each delete came after the read of its slot, and each slot was deleted once.
    const deletes = h.modem.commands.filter((c) => c.startsWith('AT+CMGD='));
    expect(deletes.sort()).toEqual(['AT+CMGD=0', 'AT+CMGD=1', 'AT+CMGD=2']);
  });

  it('forwards the SMS already on the SIM at start', async () => {
    h = await startHarness(world);
    for (const pdu of new Deliver('+447700900333', LONG).getPartStrings()) h.modem.store(pdu, false);
    h.modem.store(new Deliver('+447700900444', 'stored while the agent was away').getPartStrings()[0]!, false);
    h.startAgent();
    await vi.waitFor(async () => expect((await received(h!)).map((m) => m.message).sort()).toEqual([LONG, 'stored while the agent was away']), {
      timeout: 10_000,
    });
    await vi.waitFor(() => expect(h!.modem.stored.size).toBe(0));
  });

  it('keeps an SMS on the SIM while smsgw refuses it, and forwards it once it is back', async () => {
    h = await startHarness(world);
    // A wrong token: every call of the agent is refused (401), as when smsgw cannot be reached.
    h.startAgent({ SMSGW_DEVICE_TOKEN: 'smsgw_dt_wrong' });
    await vi.waitFor(() => expect(h!.modem.commands).toContain('AT+CMGL=4'), { timeout: 10_000 });
    h.modem.receive('+447700900555', 'wait for me');
    await vi.waitFor(() => expect(h!.logs.some((l) => l.msg === 'incoming SMS not forwarded; kept on the SIM')).toBe(true), { timeout: 10_000 });
    expect(h.modem.stored.size).toBe(1);
    expect(h.modem.commands.some((c) => c.startsWith('AT+CMGD='))).toBe(false);
    await h.stopAgent();
    h.startAgent();
    await vi.waitFor(async () => expect((await received(h!)).map((m) => m.message)).toEqual(['wait for me']), { timeout: 10_000 });
    await vi.waitFor(() => expect(h!.modem.stored.size).toBe(0));
  });

  it('logs and skips garbage lines, unknown unsolicited codes and a malformed PDU, and keeps working', async () => {
    h = await started();
    h.modem.write('\r\n^RSSI: 17\r\n\r\nRING\r\n\x00\xff garbage \x07\r\n+CREG: 1\r\n');
    const bad = h.modem.store('00040B91', true);
    h.modem.receive('+447700900666', 'still here');
    await vi.waitFor(async () => expect((await received(h!)).map((m) => m.message)).toEqual(['still here']), { timeout: 10_000 });
    expect(h.logs.filter((l) => l.msg === 'unexpected line from the modem, skipped').map((l) => l.line)).toEqual(
      expect.arrayContaining(['^RSSI: 17', 'RING', '+CREG: 1']),
    );
    expect(h.logs.some((l) => l.msg === 'unreadable message left on the SIM, skipped' && l.index === bad)).toBe(true);
    // The unreadable slot stays for a person to look at; nothing else is lost. (The forwarded one's
    // slot is deleted once smsgw has answered, which can come after smsgw has stored it.)
    await vi.waitFor(() => expect([...h!.modem.stored.keys()]).toEqual([bad]));
    const sent = await call(h.api.app, h.user.apiKey, 'POST', '/api/sms/send', { recipients: ['+15550001234'], body: 'and sends on' });
    expect(sent.statusCode).toBe(200);
    await vi.waitFor(() => expect(h!.modem.submitted).toHaveLength(1), { timeout: 10_000 });
  });
});
