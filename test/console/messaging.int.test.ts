import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmsGateClient } from '@smsgw/client';
import { expectNoHorizontalScroll, open, signIn, startConsole, type ConsoleHarness } from './support.ts';

/**
 * The console against the real API, a dispatcher and a simulated phone (issue 14, "Done when"):
 * sign-in, sending with live statuses, a validation error at its field, messages and their
 * history, received SMS, the overview, and pairing a phone.
 */
let h: ConsoleHarness;
beforeAll(async () => {
  h = await startConsole({ phone: true });
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const numbers = ['+15550001001', '+15550001002', '+15550001003'];

describe('the console, signed in with an API key', () => {
  it('refuses a wrong key with an error at the field, and signs in with a good one', async () => {
    const { page } = h;
    await page.goto(h.url());
    await page.getByLabel('API key').fill('smsgw_sk_not-a-real-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const error = page.locator('[data-field="api_key"]');
    await error.waitFor();
    expect(await error.textContent()).toMatch(/authentication|credentials|key/i);
    await h.screenshot('sign-in');
    await signIn(h);
    expect(await page.evaluate(() => Object.keys(sessionStorage))).toEqual(['smsgw.token']);
  });

  it('sends to 3 numbers and shows each reach delivered without a reload', async () => {
    const { page } = h;
    // The sent list's reads of its batch, and the event stream's (re)connections meanwhile.
    let batchReads = 0;
    let streamOpens = 0;
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/sms?') && request.url().includes('batch_id=')) batchReads++;
      if (request.url().includes('/api/v1/events')) streamOpens++;
    });
    await open(h, 'Send');
    // A mark in the page's window: a reload would drop it.
    await page.evaluate(() => Object.assign(window, { notReloaded: true }));
    await page.getByLabel('Recipients').fill(`${numbers[0]}, ${numbers[1]}\n${numbers[2]}`);
    await page.getByLabel('Message', { exact: true }).fill('Hello from the console €');
    expect(await page.getByTestId('segments').textContent()).toBe('24 characters · 1 segment · GSM-7');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const statuses = page.locator('.sent [data-message-id] .status');
    await expect.poll(() => statuses.count(), { timeout: 10_000 }).toBe(3);
    await expect.poll(() => statuses.allTextContents(), { timeout: 20_000 }).toEqual(['delivered', 'delivered', 'delivered']);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // The statuses came from the event stream: the batch was read once when shown, and once more
    // only for each (re)connection of the stream (other pages' reads are not counted).
    expect(batchReads).toBeGreaterThanOrEqual(1);
    expect(batchReads).toBeLessThanOrEqual(1 + streamOpens);
    await h.screenshot('send');
  });

  it('shows a validation error of the API next to its field', async () => {
    const { page } = h;
    await page.getByLabel('Recipients').fill('12345');
    await page.getByLabel('Message', { exact: true }).fill('Ünïcode ✓');
    expect(await page.getByTestId('segments').textContent()).toBe('9 characters · 1 segment · UCS-2');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const error = page.locator('[data-field="recipients"]');
    await error.waitFor();
    expect(await error.textContent()).toContain('E.164');
    expect(await page.getByLabel('Recipients').getAttribute('aria-invalid')).toBe('true');
  });

  it('lists the messages, filters them, and shows one with its history', async () => {
    const { page } = h;
    await open(h, 'Messages');
    const rows = page.locator('[role="tabpanel"] tbody tr');
    await expect.poll(() => rows.count()).toBe(3);
    await page.getByLabel('Recipient').fill(numbers[1]!);
    await page.getByLabel('Recipient').press('Enter');
    await page.getByLabel('Recipient').blur();
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByLabel('Status').selectOption('failed');
    await expect.poll(() => page.getByText('No messages match.').count()).toBe(1);
    await page.getByLabel('Status').selectOption('delivered');
    await expect.poll(() => rows.count()).toBe(1);
    await page.getByRole('button', { name: 'Details' }).click();
    const history = page.locator('.detail tbody tr .status');
    await expect.poll(() => history.allTextContents()).toEqual(expect.arrayContaining(['pending', 'assigned', 'delivered']));
    expect(await page.locator('.detail dd').first().textContent()).toMatch(/^[0-9a-f-]{36}$/);
    await h.screenshot('messages');
  });

  it('closes a message’s details when a filter leaves it out of the list, and keeps them while it stays', async () => {
    const { page } = h;
    // The list's rows (the details hold a table too).
    const rows = page.locator('[role="tabpanel"] tbody tr', { has: page.locator('[data-message-id]') });
    const detail = page.locator('.detail');
    expect(await detail.count()).toBe(1);
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No messages match.').waitFor();
    await expect.poll(() => detail.count()).toBe(0);
    // Listed again, it stays closed until asked for.
    await page.getByLabel('Status').selectOption('delivered');
    await expect.poll(() => rows.count()).toBe(1);
    expect(await detail.count()).toBe(0);
    // Every filter does the same: the device filter keeps the message (and its details), the recipient filter drops it.
    await page.getByRole('button', { name: 'Details', exact: true }).click();
    await detail.waitFor();
    const devices = page.waitForResponse((response) => response.url().includes('/api/v1/sms?') && response.url().includes('device_id='));
    await page.getByLabel('Device').selectOption({ label: 'sim-phone' });
    await devices;
    await expect.poll(() => rows.count()).toBe(1);
    expect(await detail.count()).toBe(1);
    await page.getByLabel('Recipient').fill(numbers[0]!);
    await page.getByLabel('Recipient').press('Enter');
    await expect.poll(() => page.getByRole('cell', { name: numbers[0]!, exact: true }).count()).toBe(1);
    await expect.poll(() => detail.count()).toBe(0);
  });

  it('keeps a message’s open details current when its status changes', async () => {
    const { page } = h;
    const headers = { 'x-api-key': h.apiKey, 'content-type': 'application/json' };
    const sendAt = new Date(Date.now() + 3_600_000).toISOString();
    const sent = await fetch(`${h.cluster.baseUrl}/api/sms/send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ recipients: [numbers[2]], body: 'Later', send_at: sendAt }),
    });
    const id = ((await sent.json()) as { message_ids: string[] }).message_ids[0]!;
    await page.getByLabel('Recipient').fill(numbers[2]!);
    await page.getByLabel('Recipient').press('Enter');
    await page.getByLabel('Device').selectOption('');
    await page.getByLabel('Status').selectOption('queued');
    await page.locator(`[data-message-id="${id}"]`).waitFor();
    await page.getByRole('button', { name: 'Details', exact: true }).click();
    const status = page.locator('.detail dd .status');
    await expect.poll(() => status.textContent()).toBe('queued');
    const cancelled = await fetch(`${h.cluster.baseUrl}/api/v1/sms/${id}/cancel`, { method: 'POST', headers: { 'x-api-key': h.apiKey } });
    expect(cancelled.status).toBe(200);
    // The live event updates the row, and the details read the message again.
    await expect.poll(() => page.locator(`[data-message-id="${id}"]`).textContent()).toBe('cancelled');
    await expect.poll(() => status.textContent()).toBe('cancelled');
    expect(await page.locator('.detail tbody tr .status').allTextContents()).toContain('cancelled');
  });

  it('pages on past the 1,000 messages the API counts, and says 1000+', async () => {
    const { page } = h;
    const to = '+15550007777';
    await h.db.$executeRaw`
      INSERT INTO messages (id, user_id, to_number, body, segments, encoding, state, created_at, updated_at)
      SELECT gen_random_uuid(), ${h.userId}::uuid, ${to}, 'one of many', 1, 'GSM-7', 'delivered', timestamptz '2026-01-01' + n * interval '1 second', now()
        FROM generate_series(1, 1005) n`;
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Device').selectOption('');
    await page.getByLabel('Recipient').fill(to);
    await page.getByLabel('Recipient').press('Enter');
    const pager = page.locator('[role="tabpanel"] .pager span');
    await expect.poll(() => pager.textContent()).toBe('1–20 of 1000+');
    for (let offset = 20; offset <= 1000; offset += 20) {
      await page.getByRole('button', { name: 'Older' }).click();
      await expect.poll(() => pager.textContent()).toMatch(new RegExp(`^${offset + 1}–`));
    }
    await expect.poll(() => pager.textContent()).toBe('1001–1005 of 1000+');
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    await page.getByLabel('Recipient').fill('');
    await page.getByLabel('Recipient').press('Enter');
  });

  it('shows a received SMS in its own tab as it arrives', async () => {
    const { page } = h;
    await page.getByRole('tab', { name: 'Received' }).click();
    await page.getByText('No SMS received yet.').waitFor();
    const res = await fetch(`${h.cluster.baseUrl}/api/v1/device/inbound`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.deviceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ from: '+15550009999', message: 'Reply from a customer', received_at: new Date().toISOString() }] }),
    });
    expect(res.status).toBe(202);
    await page.getByText('Reply from a customer').waitFor({ timeout: 10_000 });
    await h.screenshot('messages-received');
  });

  it('shows quota, devices online, the chart of the last 24 hours and recent failures', async () => {
    const { page } = h;
    await open(h, 'Overview');
    await expect.poll(() => page.getByTestId('quota').textContent()).toBe('3 / 1000');
    expect(await page.getByTestId('devices-online').textContent()).toBe('1 / 1');
    await page.locator('.uplot canvas').waitFor();
    expect(await page.getByRole('img', { name: /Totals: .*delivered 3/ }).count()).toBe(1);
    await page.getByText('No failures.').waitFor();
    await h.screenshot('overview');
  });

  it('pairs a phone: the code, the URL and its QR code; the phone registers with the code and appears', async () => {
    const { page } = h;
    await open(h, 'Devices');
    await page.locator('[data-device-name="sim-phone"]').waitFor();
    await page.getByRole('button', { name: 'Add phone' }).click();
    await page.getByLabel('Device name (optional)').fill('Shop phone');
    await page.getByRole('button', { name: 'Create pairing' }).click();
    const code = (await page.getByTestId('pairing-code').textContent())!;
    expect(code).toMatch(/^\d{8}$/);
    const mobileUrl = (await page.getByTestId('mobile-url').textContent())!;
    expect(mobileUrl).toBe(`${h.cluster.baseUrl}/mobile/v1`);
    expect(await page.getByRole('img', { name: /QR code of the API URL/ }).getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    await h.screenshot('devices-pairing');
    await new SmsGateClient(mobileUrl).register({ auth: { code }, name: 'Pixel/test' });
    await page.locator('[data-device-name="Shop phone"]').waitFor({ timeout: 10_000 });
    expect(await page.locator('tr', { has: page.locator('[data-device-name="Shop phone"]') }).textContent()).toContain('Phone (SMS Gate)');
  });

  it('adds a modem with the agent command and its token, disables and deletes a device', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Add modem' }).click();
    await page.getByLabel('Device name').fill('Modem 1');
    await page.getByRole('button', { name: 'Create device' }).click();
    const command = (await page.getByTestId('modem-command').textContent())!;
    expect(command).toMatch(new RegExp(`^\\./pnpmw modem --port \\S+ --server ${h.cluster.baseUrl} --token smsgw_dt_\\S+$`));
    await page.locator('[data-device-name="Modem 1"]').waitFor();
    // Its rate limits: a refused value is shown at its field and changes nothing; then 6 a minute.
    await page.getByRole('button', { name: 'Limits of Modem 1' }).click();
    const form = page.getByRole('form', { name: 'Rate limits of Modem 1' });
    await form.getByLabel('Per minute').fill('100001');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await form.locator('[data-field="rate_limit_per_minute"]').waitFor();
    expect(await page.locator('[data-limits="Modem 1"]').textContent()).toBe('none');
    await form.getByLabel('Per minute').fill('6');
    await form.getByLabel('Per day').fill('500');
    await form.getByLabel('Segments a day').fill('300');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await expect.poll(() => page.locator('[data-limits="Modem 1"]').textContent()).toBe('6/min, 500/day, 300 seg/day');
    await page.getByRole('button', { name: 'Disable Modem 1' }).click();
    await page.getByRole('button', { name: 'Enable Modem 1' }).waitFor();
    await page.getByRole('button', { name: 'Delete Modem 1' }).click();
    await page.getByRole('button', { name: 'Confirm delete Modem 1' }).click();
    await expect.poll(() => page.locator('[data-device-name="Modem 1"]').count()).toBe(0);
    await h.screenshot('devices');
  });

  it('fits 375 px without horizontal scrolling, keyboard first', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 375, height: 800 });
    for (const label of ['Overview', 'Send', 'Messages', 'Devices']) {
      await open(h, label);
      await expectNoHorizontalScroll(page);
    }
    await h.screenshot('devices-375');
    await page.setViewportSize({ width: 1200, height: 900 });
  });

  it('signs out: the token is gone and the sign-in form is back', async () => {
    const { page } = h;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('smsgw.token'))).toBeNull();
  });

  it('signs in again with the keyboard alone', async () => {
    const { page } = h;
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('api_key');
    await page.keyboard.type(h.apiKey);
    await page.keyboard.press('Enter');
    // Back on the page it was signed out from.
    await page.getByRole('heading', { level: 1, name: 'Devices' }).waitFor();
  });

  it('ends the session when its API key is revoked, and says so', async () => {
    const { page } = h;
    const headers = { 'x-api-key': h.apiKey };
    const keys = (await (await fetch(`${h.cluster.baseUrl}/api/v1/api-keys`, { headers })).json()) as { data: { id: string }[] };
    expect(keys.data).toHaveLength(1);
    const revoked = await fetch(`${h.cluster.baseUrl}/api/v1/api-keys/${keys.data[0]!.id}`, { method: 'DELETE', headers });
    expect(revoked.ok).toBe(true);
    // The next request of the page is refused: the console signs out and says why.
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByText('Your session ended').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('smsgw.token'))).toBeNull();
  });

  it('logged no error in the browser console', () => {
    expect(h.errors).toEqual([]);
  });
});
