import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Resolver } from '@smsgw/core';
import { call, createTestUser, startTestApi, type TestApi } from '../testing/test-api.ts';

/** A device's Twilio incoming-SMS URLs (issue 25, B.4): set by PATCH, shown in its record, held to the webhook URL rules. */
// The stub DNS: names not listed do not resolve.
const HOSTS: Record<string, string[]> = {
  'hooks.example': ['93.184.215.14'],
  'other.example': ['93.184.215.15'],
  'internal.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '10.1.2.3'],
};
const resolver: Resolver = async (hostname) => {
  const addresses = HOSTS[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses;
};

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({}, { webhookResolver: resolver });
});
afterAll(async () => {
  await api?.close();
});

const patch = (apiKey: string, id: string, payload: unknown) => call(api.app, apiKey, 'PATCH', `/api/v1/devices/${id}`, payload);
const get = async (apiKey: string, id: string) => (await call(api.app, apiKey, 'GET', `/api/v1/devices/${id}`)).json();
const TWO_SIMS = [
  { slotIndex: 0, simNumber: 1, phoneNumber: '+15550100001' },
  { slotIndex: 1, simNumber: 2 },
];

describe('Twilio incoming-SMS URLs of a device', () => {
  it("sets the device's URL and a SIM's, shows them, keeps what is left out, and clears with null", async () => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    await api.db.device.update({ where: { id }, data: { simCards: TWO_SIMS } });
    expect(await get(apiKey, id)).toMatchObject({ twilio_sms_url: null, sims: [] });

    const set = await patch(apiKey, id, {
      twilio_sms_url: 'https://hooks.example/sms',
      sims: [{ sim_number: 2, twilio_sms_url: 'https://other.example/sim2' }],
    });
    expect(set.statusCode).toBe(200);
    expect(set.json()).toMatchObject({
      twilio_sms_url: 'https://hooks.example/sms',
      sims: [
        {
          sim_number: 2,
          segments_per_hour: null,
          segments_per_day: null,
          segments_per_month: null,
          unique_recipients_per_month: null,
          twilio_sms_url: 'https://other.example/sim2',
        },
      ],
    });
    // A budget of SIM 2 keeps its URL; a rename keeps both URLs; the budget change alone does not touch them.
    await patch(apiKey, id, { name: 'renamed', sims: [{ sim_number: 2, segments_per_day: 50 }] });
    expect(await get(apiKey, id)).toMatchObject({
      name: 'renamed',
      twilio_sms_url: 'https://hooks.example/sms',
      sims: [{ sim_number: 2, segments_per_day: 50, twilio_sms_url: 'https://other.example/sim2' }],
    });
    const listed = (await call(api.app, apiKey, 'GET', '/api/v1/devices')).json().data[0];
    expect(listed).toMatchObject({ twilio_sms_url: 'https://hooks.example/sms', sims: [{ sim_number: 2, twilio_sms_url: 'https://other.example/sim2' }] });

    const cleared = await patch(apiKey, id, { twilio_sms_url: null, sims: [{ sim_number: 2, twilio_sms_url: null }] });
    expect(cleared.json()).toMatchObject({ twilio_sms_url: null, sims: [{ sim_number: 2, segments_per_day: 50, twilio_sms_url: null }] });
    const row = await api.db.device.findUniqueOrThrow({ where: { id } });
    expect([row.twilioSmsUrl, row.simTwilioSmsUrls]).toEqual([null, null]);
  });

  it.each([
    [{ twilio_sms_url: 'ftp://hooks.example/sms' }, 'invalid_webhook_url', 'twilio_sms_url: The URL must use http or https.'],
    [{ twilio_sms_url: 'https://internal.example/sms' }, 'invalid_webhook_url', 'twilio_sms_url: The host internal.example resolves to 10.1.2.3'],
    [{ twilio_sms_url: 'http://127.0.0.1/sms' }, 'invalid_webhook_url', 'twilio_sms_url: The address 127.0.0.1 is'],
    [{ twilio_sms_url: 'https://user:pw@hooks.example/sms' }, 'invalid_webhook_url', 'user name or password'],
    [{ twilio_sms_url: 'not a url' }, 'invalid_webhook_url', 'spaces'],
    [{ twilio_sms_url: '' }, 'invalid_request', 'twilio_sms_url'],
    [{ twilio_sms_url: `https://hooks.example/${'x'.repeat(2000)}` }, 'invalid_request', 'twilio_sms_url'],
    [{ twilio_sms_url: 42 }, 'invalid_request', 'twilio_sms_url'],
    [
      { sims: [{ sim_number: 2, twilio_sms_url: 'https://mixed.example/sms' }] },
      'invalid_webhook_url',
      'sims[0].twilio_sms_url: The host mixed.example resolves to 10.1.2.3',
    ],
    [{ sims: [{ sim_number: 3, twilio_sms_url: 'https://hooks.example/sms' }] }, 'invalid_request', 'the device has no SIM 3'],
    [
      {
        sims: [
          { sim_number: 1, twilio_sms_url: 'https://hooks.example/a' },
          { sim_number: 1, twilio_sms_url: null },
        ],
      },
      'invalid_request',
      'listed twice',
    ],
    [{ twilio_sms_url: 'https://hooks.example/ok', sims: [{ sim_number: 1, twilio_sms_url: 'https://internal.example/x' }] }, 'invalid_webhook_url', 'sims[0]'],
  ])('refuses %j with 400 %s and changes nothing', async (payload, error, message) => {
    const { apiKey, devices } = await createTestUser(api.db, { devices: 1 });
    const id = devices[0]!.id;
    const setup = await patch(apiKey, id, {
      twilio_sms_url: 'https://hooks.example/before',
      sims: [{ sim_number: 1, twilio_sms_url: 'https://hooks.example/sim1' }],
    });
    expect(setup.statusCode).toBe(200);
    const before = await api.db.device.findUniqueOrThrow({ where: { id } });
    const res = await patch(apiKey, id, payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error, message: expect.stringContaining(message) });
    expect(await api.db.device.findUniqueOrThrow({ where: { id } })).toEqual(before);
  });

  it("answers 404 for another user's device, before looking at the URL", async () => {
    const { devices } = await createTestUser(api.db, { devices: 1 });
    const other = await createTestUser(api.db);
    const res = await patch(other.apiKey, devices[0]!.id, { twilio_sms_url: 'https://internal.example/x' });
    expect([res.statusCode, res.json().error]).toEqual([404, 'not_found']);
  });
});
