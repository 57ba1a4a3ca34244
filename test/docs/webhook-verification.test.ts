import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWebhookSecret, webhookHeaders } from '@smsgw/core';

/**
 * The receiver's verification example of docs/http-api.md ("Verifying a signature"), run as it is
 * written against the headers that smsgw's dispatcher sends (`webhookHeaders` of packages/core).
 */
type Verify = (secret: string, headers: Record<string, string | undefined>, rawBody: string | Buffer, toleranceSeconds?: number) => boolean;

const DOC = fileURLToPath(new URL('../../docs/http-api.md', import.meta.url));

/** The ```js block of the doc that defines verifyWebhook. */
function verificationExample(markdown: string): string {
  const block = [...markdown.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => m[1]!).find((code) => code.includes('export function verifyWebhook'));
  if (!block) throw new Error('docs/http-api.md has no ```js block that exports verifyWebhook');
  return block;
}

let dir: string;
let verifyWebhook: Verify;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'smsgw-docs-'));
  const file = join(dir, 'verify-webhook.mjs');
  writeFileSync(file, verificationExample(readFileSync(DOC, 'utf8')));
  ({ verifyWebhook } = (await import(pathToFileURL(file).href)) as { verifyWebhook: Verify });
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const body = JSON.stringify({ type: 'message.delivered', timestamp: '2026-11-21T10:30:02.512Z', data: { id: '0193', to: '+15551234567', message: 'Grüße €' } });
const now = () => Math.floor(Date.now() / 1000);

describe('the signature verification example of docs/http-api.md', () => {
  it('accepts what smsgw signs, as a string or as the raw bytes', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([secret], 'delivery-1', now(), body);
    expect(verifyWebhook(secret, headers, body)).toBe(true);
    expect(verifyWebhook(secret, headers, Buffer.from(body))).toBe(true);
  });

  it('accepts either secret during a rotation, when smsgw signs with both', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = webhookHeaders([current, previous], 'delivery-2', now(), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verifyWebhook(current, headers, body)).toBe(true);
    expect(verifyWebhook(previous, headers, body)).toBe(true);
  });

  it('refuses another secret, a changed body, id or timestamp', () => {
    const secret = generateWebhookSecret();
    const at = now();
    const headers = webhookHeaders([secret], 'delivery-3', at, body);
    expect(verifyWebhook(generateWebhookSecret(), headers, body)).toBe(false);
    expect(verifyWebhook(secret, headers, body.replace('Grüße', 'Gruesse'))).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-id': 'delivery-4' }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': String(at - 1) }, body)).toBe(false);
  });

  it('refuses a timestamp outside the tolerance, even correctly signed (a replay)', () => {
    const secret = generateWebhookSecret();
    const old = now() - 301;
    expect(verifyWebhook(secret, webhookHeaders([secret], 'delivery-5', old, body), body)).toBe(false);
    expect(verifyWebhook(secret, webhookHeaders([secret], 'delivery-5', old, body), body, 600)).toBe(true);
    expect(verifyWebhook(secret, webhookHeaders([secret], 'delivery-6', now() + 301, body), body)).toBe(false);
  });

  it('refuses missing or malformed headers and other signature versions', () => {
    const secret = generateWebhookSecret();
    const headers = webhookHeaders([secret], 'delivery-7', now(), body);
    expect(verifyWebhook(secret, { ...headers, 'webhook-id': undefined }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': undefined }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': undefined }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-timestamp': 'soon' }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': headers['webhook-signature']!.replace(/^v1,/, 'v2,') }, body)).toBe(false);
    expect(verifyWebhook(secret, { ...headers, 'webhook-signature': 'v1,' }, body)).toBe(false);
  });
});
