import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoHorizontalScroll, open, signIn, startConsole, type ConsoleHarness } from './support.ts';

/**
 * The console's address book and settings against the real API, a dispatcher and a simulated phone (issue 14, "Done
 * when"): contacts with a CSV import, groups, templates, webhooks with a test delivery, API keys.
 */
let h: ConsoleHarness;
let receiver: Server;
const received: { headers: Record<string, unknown>; body: string }[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  h = await startConsole({ phone: true, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  await signIn(h);
}, 120_000);
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('the console’s address book and settings', () => {
  it('imports contacts from a CSV file, adds one, and refuses a bad phone at its field', async () => {
    const { page } = h;
    await open(h, 'Contacts');
    const csv = 'name,phone\nAda Lovelace,+15550002001\nAlan Turing,+15550002002\nGrace Hopper,+15550002003\n';
    await page.getByLabel('Import a CSV file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.getByRole('button', { name: 'Import contacts' }).click();
    await page.getByText('Imported: 3 new, 0 updated.').waitFor();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(3);
    await page.getByLabel('Name', { exact: true }).fill('Bad Number');
    await page.getByLabel('Phone', { exact: true }).fill('555');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await page.locator('[data-field="phone"]').waitFor();
    await page.getByLabel('Phone', { exact: true }).fill('+15550002004');
    await page.getByRole('button', { name: 'Add contact' }).click();
    await expect.poll(() => page.locator('tbody tr').count()).toBe(4);
    await h.screenshot('contacts');
  });

  it('creates a group and adds members by phone', async () => {
    const { page } = h;
    await open(h, 'Groups');
    await page.getByLabel('Group name').fill('Customers');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.getByRole('button', { name: 'Members of Customers' }).click();
    await page.getByLabel('Add members by phone').fill('+15550002001, +15550002002');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(() => page.locator('section[aria-label="Members"] tbody tr').count()).toBe(2);
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toContain('2');
    await h.screenshot('groups');
  });

  it('creates a template and shows its variables', async () => {
    const { page } = h;
    await open(h, 'Templates');
    await page.getByLabel('Name', { exact: true }).fill('Reminder');
    await page.getByLabel('Text', { exact: true }).fill('Hi {{name}}, your {{item}} is ready.');
    await page.getByRole('button', { name: 'Create template' }).click();
    await expect.poll(() => page.locator('tbody tr').first().textContent()).toContain('name, item');
    await h.screenshot('templates');
  });

  it('sends the template to the group, with its variable, and counts the members', async () => {
    const { page } = h;
    await open(h, 'Send');
    await page.getByRole('checkbox', { name: 'Customers (2)' }).check();
    await page.getByRole('radio', { name: 'Use a template' }).check();
    await page.getByLabel('Template', { exact: true }).selectOption({ label: 'Reminder' });
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    // Without its variable the API refuses the send: the error is shown at the variables.
    await page.locator('[data-field="variables"]').waitFor();
    await page.getByLabel('Variable item').fill('parcel');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByRole('heading', { name: 'Sent: 2 messages' }).waitFor();
  });

  it('closes a group’s members when the group is deleted', async () => {
    const { page } = h;
    await open(h, 'Groups');
    await page.getByRole('button', { name: 'Members of Customers' }).click();
    const members = page.locator('section[aria-label="Members"]');
    await expect.poll(() => members.locator('tbody tr').count()).toBe(2);
    await page.getByRole('button', { name: 'Delete Customers' }).click();
    await page.getByText('No groups.').waitFor();
    await expect.poll(() => members.count()).toBe(0);
  });

  it('adds a webhook endpoint (secret shown once), sends a test and shows it delivered in the log', async () => {
    const { page } = h;
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    await open(h, 'Webhooks');
    await page.getByLabel('Endpoint URL').fill('ftp://example.org/x');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.locator('[data-field="url"]').waitFor();
    await page.getByLabel('Endpoint URL').fill(url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.getByTestId('webhook-secret').textContent()).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Send test' }).click();
    const tests = () => received.filter((r) => (JSON.parse(r.body) as { type: string }).type === 'webhook.test');
    await expect.poll(() => tests().length, { timeout: 15_000 }).toBe(1);
    expect(tests()[0]!.headers['webhook-signature']).toMatch(/^v1,/);
    const row = page.locator('section[aria-labelledby="deliveries-title"] tbody tr', { hasText: 'webhook.test' });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return row.textContent();
        },
        { timeout: 10_000 },
      )
      .toMatch(/webhook\.test.*succeeded.*1.*HTTP 204/);
    const before = (await page.getByTestId('webhook-secret').textContent())!;
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await expect.poll(() => page.getByTestId('webhook-secret').textContent()).not.toBe(before);
    await h.screenshot('webhooks');
  });

  it('closes the delivery log of an endpoint that is deleted', async () => {
    const { page } = h;
    const log = page.locator('section[aria-labelledby="deliveries-title"]');
    expect(await log.count()).toBe(1);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No endpoints.').waitFor();
    await expect.poll(() => log.count()).toBe(0);
  });

  it('creates an API key shown once that signs in, and revokes it', async () => {
    const { page } = h;
    await open(h, 'API keys');
    await page.getByLabel('Key name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^smsgw_sk_/);
    const token = await fetch(`${h.cluster.baseUrl}/api/v1/auth/token`, { method: 'POST', headers: { 'x-api-key': key } });
    expect(token.status).toBe(200);
    await h.screenshot('api-keys');
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await page.getByRole('button', { name: 'Confirm revoke ci' }).click();
    await expect.poll(() => page.locator('tr', { hasText: 'ci' }).first().textContent()).toContain('revoked');
    const refused = await fetch(`${h.cluster.baseUrl}/api/v1/auth/token`, { method: 'POST', headers: { 'x-api-key': key } });
    expect(refused.status).toBe(401);
  });

  it('shows the Twilio credentials, which the twilio API takes, and replaces the Auth Token', async () => {
    const { page } = h;
    await open(h, 'API keys');
    const sid = (await page.getByTestId('twilio-account-sid').textContent())!;
    const token = (await page.getByTestId('twilio-auth-token').textContent())!;
    expect(sid).toMatch(/^AC[0-9a-f]{32}$/);
    expect(await page.getByTestId('twilio-service-sid').textContent()).toMatch(/^MG[0-9a-f]{32}$/);
    const list = (password: string) =>
      fetch(`${h.cluster.baseUrl}/2010-04-01/Accounts/${sid}/Messages.json`, {
        headers: { authorization: `Basic ${Buffer.from(`${sid}:${password}`).toString('base64')}` },
      });
    expect((await list(token)).status).toBe(200);
    await page.getByRole('button', { name: 'Replace the Auth Token' }).click();
    await page.getByRole('button', { name: 'Confirm: replace the Auth Token' }).click();
    await expect.poll(() => page.getByTestId('twilio-auth-token').textContent()).not.toBe(token);
    expect((await list(token)).status).toBe(401);
    expect((await list((await page.getByTestId('twilio-auth-token').textContent())!)).status).toBe(200);
  });

  it("shows the SMS Gate credentials, with which SMS Gate's client API takes an API key", async () => {
    const { page } = h;
    await open(h, 'API keys');
    const url = (await page.getByTestId('sms-gate-url').textContent())!;
    const username = (await page.getByTestId('sms-gate-username').textContent())!;
    expect(url).toBe(`${h.cluster.baseUrl}/3rdparty/v1`);
    expect(await page.getByTestId('sms-gate-signing-key').textContent()).toMatch(/^[0-9a-f]{32}$/);
    const devices = (password: string) =>
      fetch(`${url}/devices`, { headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}` } });
    expect((await devices(h.apiKey)).status).toBe(200);
    expect((await devices('not-a-key')).status).toBe(401);
  });

  it('fits 375 px without horizontal scrolling on every page', async () => {
    const { page } = h;
    await page.setViewportSize({ width: 375, height: 800 });
    for (const label of ['Contacts', 'Groups', 'Templates', 'Webhooks', 'API keys']) {
      await open(h, label);
      await expectNoHorizontalScroll(page);
    }
    await h.screenshot('api-keys-375');
  });

  it('logged no error in the browser console', () => {
    expect(h.errors).toEqual([]);
  });
});
