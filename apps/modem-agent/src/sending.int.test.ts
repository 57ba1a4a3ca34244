/**
 * The agent against a fake modem on a socat pseudo-terminal and the real API and dispatcher:
 * initialisation, submissions decoded back with node-pdu, status reports, errors, restarts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse, Submit, utils } from 'node-pdu';
import { createDevice } from '@smsgw/db';
import { call, send, uniquePhone } from '@smsgw/api/testing';
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

const INIT = ['AT', 'ATE0', 'AT+CMEE=1', 'AT+CPIN?', 'AT+CMGF=0', 'AT+CSMS=0', 'AT+CNMI=2,1,0,1,0', 'AT+CMGL=4'];

async function ready(harness: Harness): Promise<void> {
  await vi.waitFor(() => expect(harness.logs.some((l) => l.msg === 'modem ready')).toBe(true), { timeout: 10_000 });
  // The event stream is open: the device is available to the dispatcher.
  await vi.waitFor(async () => expect((await harness.api.db.device.findUniqueOrThrow({ where: { id: harness.user.deviceId! } })).streamSeenAt).not.toBeNull(), {
    timeout: 10_000,
  });
}

async function sendOne(harness: Harness, body: string, to = uniquePhone()): Promise<string> {
  const res = await send(harness.api.app, harness.user.apiKey, { recipients: [to], body });
  expect(res.statusCode).toBe(200);
  return res.json().message_ids[0];
}

function message(harness: Harness, id: string) {
  return harness.api.db.message.findUniqueOrThrow({ where: { id } });
}

async function waitForState(harness: Harness, id: string, state: string, timeout = 10_000) {
  await vi.waitFor(async () => expect((await message(harness, id)).state).toBe(state), { timeout, interval: 50 });
  return message(harness, id);
}

function decodeSubmitted(pdu: string) {
  const parsed = parse(pdu);
  if (!(parsed instanceof Submit)) throw new Error('not an SMS-SUBMIT');
  return {
    to: `+${parsed.address.phone}`,
    text: parsed.data.getText(),
    statusReport: parsed.type.statusReportRequest === 1,
    ucs2: parsed.dataCodingScheme.textAlphabet === utils.DCS.ALPHABET_UCS2,
    part: parsed.data.parts[0]?.header?.toJSON() ?? null,
  };
}

describe('modem agent: initialisation', () => {
  it('initialises the modem in PDU mode with +CMTI and +CDS, then lists the SIM', async () => {
    const harness = (h = await startHarness(world));
    harness.startAgent();
    await ready(harness);
    // The SIM is listed (AT+CMGL=4) once the modem is ready, on the agent's own time.
    await vi.waitFor(() => expect(harness.modem.commands.slice(0, INIT.length)).toEqual(INIT), { timeout: 10_000 });
  });

  it('enters the SIM PIN when the SIM asks for it', async () => {
    h = await startHarness(world, { pin: '4321' });
    h.startAgent({ MODEM_PIN: '4321' });
    await ready(h);
    expect(h.modem.commands.slice(3, 6)).toEqual(['AT+CPIN?', 'AT+CPIN="4321"', 'AT+CPIN?']);
  });
});

describe('modem agent: sending', () => {
  it('submits a GSM-7 text and a 200-character UCS-2 text as correct PDUs, sent then delivered from +CDS', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    const to = uniquePhone();
    const gsm = await sendOne(h, 'Your code is 1234 {ok}', to);
    await waitForState(h, gsm, 'sent');
    expect(h.modem.submitted).toHaveLength(1);
    const [single] = h.modem.submitted;
    expect(decodeSubmitted(single!.pdu)).toEqual({ to, text: 'Your code is 1234 {ok}', statusReport: true, ucs2: false, part: null });
    expect(single!.length).toBe(single!.pdu.length / 2 - 1);

    const text = 'Добрый день! Ваш заказ готов. '.repeat(7).slice(0, 200);
    const ucs = await sendOne(h, text, to);
    const sent = await waitForState(h, ucs, 'sent');
    expect(sent.segments).toBe(3);
    const parts = h.modem.submitted.slice(1).map((s) => decodeSubmitted(s.pdu));
    expect(parts.map((p) => p.text).join('')).toBe(text);
    expect(parts.map((p) => [p.to, p.ucs2, p.statusReport, p.part?.SEGMENTS, p.part?.CURRENT])).toEqual([1, 2, 3].map((n) => [to, true, true, 3, n]));

    // A status report per part: delivered only when every part is.
    h.modem.statusReport(single!.mr, 0);
    await waitForState(h, gsm, 'delivered');
    const [first, second, third] = h.modem.submitted.slice(1);
    h.modem.statusReport(first!.mr, 0);
    h.modem.statusReport(second!.mr, 0);
    await vi.waitFor(() => expect(h!.logs.filter((l) => l.msg === 'message delivered')).toHaveLength(1));
    expect((await message(h, ucs)).state).toBe('sent');
    h.modem.statusReport(third!.mr, 0);
    await waitForState(h, ucs, 'delivered');
  });

  it('matches status reports that come at once: in the same read as their +CMGS, and before the next part is submitted', async () => {
    h = await startHarness(world, { deliverAfterMs: 0 });
    h.startAgent();
    await ready(h);
    const id = await sendOne(h, 'Добрый день! Ваш заказ готов. '.repeat(7).slice(0, 200));
    await waitForState(h, id, 'delivered');
    expect(h.modem.submitted).toHaveLength(3);
    expect(h.logs.filter((l) => l.msg === 'status report for no message of this agent, skipped')).toEqual([]);
  });

  it('fails a message with the +CMS ERROR in words, and one whose status report says it failed', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    h.modem.failNextSubmit = 38;
    const refused = await sendOne(h, 'refused');
    expect((await waitForState(h, refused, 'failed')).error).toBe('Refused by the modem: network out of order (+CMS ERROR: 38)');

    const lost = await sendOne(h, 'never arrives');
    await waitForState(h, lost, 'sent');
    h.modem.statusReport(h.modem.submitted.at(-1)!.mr, 0x46);
    expect((await waitForState(h, lost, 'failed')).error).toBe('Not delivered: validity period expired (status report 0x46)');
  });

  it('reports a +CMS ERROR in answer to the first part retryable: nothing reached the network, so smsgw may use another device', async () => {
    h = await startHarness(world);
    // Another device of the user, paused: out of round-robin, so the message waits for it instead of leaving at once.
    const other = await createDevice(h.api.db, { userId: h.user.userId, name: 'other' });
    await h.api.db.device.update({ where: { id: other.device.id }, data: { lastSeenAt: new Date(), pausedUntil: new Date(Date.now() + 3_600_000) } });
    h.startAgent();
    await ready(h);
    h.modem.failNextSubmit = 38;
    const id = await sendOne(h, 'refused before it left');
    await vi.waitFor(async () => expect((await message(h!, id)).attempts).toHaveLength(1), { timeout: 10_000, interval: 50 });
    expect(await message(h, id)).toMatchObject({
      state: 'pending',
      attempts: [{ device_id: h.user.deviceId, error: 'Refused by the modem: network out of order (+CMS ERROR: 38)' }],
    });
  });

  it('fails a message for SIM 2 without submitting it (a modem has one SIM), and sends one for SIM 1', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    const sendFor = (sim: number) =>
      call(h!.api.app, h!.user.apiKey, 'POST', '/api/sms/send', { recipients: [uniquePhone()], body: `sim ${sim}`, sim_number: sim });
    const [second, first] = await Promise.all([sendFor(2), sendFor(1)]);
    const wrongSim = second.json().message_ids[0];
    expect((await waitForState(h, wrongSim, 'failed')).error).toBe('Not sent: the message asks for SIM 2, and a modem has only SIM 1.');
    await waitForState(h, first.json().message_ids[0], 'sent');
    expect(h.modem.submitted.map((s) => decodeSubmitted(s.pdu).text)).toEqual(['sim 1']);
  });

  it('never submits a message twice across a restart, and still matches its status report after it', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    const id = await sendOne(h, 'before the restart');
    await waitForState(h, id, 'sent');
    await h.stopAgent();
    h.startAgent();
    await vi.waitFor(() => expect(h!.modem.commands.filter((c) => c === 'AT+CNMI=2,1,0,1,0')).toHaveLength(2), { timeout: 10_000 });
    h.modem.statusReport(h.modem.submitted[0]!.mr, 0);
    await waitForState(h, id, 'delivered');
    expect(h.modem.submitted).toHaveLength(1);
  });

  it('fails, never resubmits, a message the agent was submitting when it died', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    const id = await sendOne(h, 'interrupted');
    await waitForState(h, id, 'sent');
    await h.stopAgent();
    // What a crash between writing the PDU and reading +CMGS leaves in the state file.
    const state = JSON.parse(await readFile(h.stateFile, 'utf8')) as { submissions: { id: string; phase: string; refs: number[] }[] };
    expect(state.submissions.map((s) => [s.id, s.phase])).toEqual([[id, 'sent']]);
    state.submissions[0]!.phase = 'submitting';
    state.submissions[0]!.refs = [];
    await writeFile(h.stateFile, JSON.stringify(state));
    h.startAgent();
    expect((await waitForState(h, id, 'failed')).error).toMatch(/stopped while submitting this message; it may or may not have been sent/);
    expect(h.modem.commands.filter((c) => c.startsWith('AT+CMGS='))).toHaveLength(1);
    await vi.waitFor(async () => expect(JSON.parse(await readFile(h!.stateFile, 'utf8')).submissions).toEqual([]));
  });

  it('detects a modem that stops answering, initialises it again and sends on', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    h.modem.silent = true;
    await vi.waitFor(() => expect(h!.logs.some((l) => l.msg === 'modem lost; opening it again' && /no answer to AT/.test(String(l.reason)))).toBe(true), {
      timeout: 10_000,
    });
    h.modem.silent = false;
    await vi.waitFor(() => expect(h!.logs.filter((l) => l.msg === 'modem ready')).toHaveLength(2), { timeout: 10_000 });
    const id = await sendOne(h, 'after the hang');
    await waitForState(h, id, 'sent');
  });

  it('survives the port vanishing and coming back', async () => {
    h = await startHarness(world);
    h.startAgent();
    await ready(h);
    await h.replug();
    await vi.waitFor(() => expect(h!.modem.commands.slice(0, INIT.length)).toEqual(INIT), { timeout: 10_000 });
    const id = await sendOne(h, 'after the replug');
    await waitForState(h, id, 'sent');
  });
});

describe('modem agent: smsgw unreachable while sending', () => {
  it('keeps the sent and delivered reports while smsgw is unreachable, gives them once it is back, and submits nothing twice', async () => {
    h = await startHarness(world);
    const { hostname, port } = new URL(world.baseUrl);
    relay = new TcpRelay({ host: hostname, port: Number(port) });
    await relay.open();
    h.startAgent({ SMSGW_URL: relay.url });
    await ready(h);

    // Taken, acknowledged and submitted; smsgw goes away before the modem accepts it.
    h.modem.holding = true;
    const id = await sendOne(h, 'through an outage');
    await vi.waitFor(() => expect(h!.modem.submitted).toHaveLength(1), { timeout: 10_000 });
    await relay.cut();
    h.modem.release();
    await vi.waitFor(() => expect(h!.logs.some((l) => l.msg === 'message sent' && l.id === id)).toBe(true), { timeout: 5_000 });
    h.modem.statusReport(h.modem.submitted[0]!.mr, 0);
    const delivered = () => h!.logs.findIndex((l) => l.msg === 'message delivered' && l.id === id);
    await vi.waitFor(() => expect(delivered()).toBeGreaterThanOrEqual(0), { timeout: 5_000 });
    // The agent tried to report and could not; smsgw still has the message as the agent left it.
    await vi.waitFor(() => expect(h!.logs.slice(delivered()).some((l) => l.msg === 'reports not accepted; trying again later')).toBe(true), {
      timeout: 10_000,
    });
    expect((await message(h, id)).state).toBe('sending');

    await relay.open();
    await waitForState(h, id, 'delivered');
    expect(h.modem.commands.filter((c) => c.startsWith('AT+CMGS='))).toHaveLength(1);
    expect(h.modem.submitted).toHaveLength(1);
    await vi.waitFor(async () => expect(JSON.parse(await readFile(h!.stateFile, 'utf8')).submissions).toEqual([]));
  });
});
