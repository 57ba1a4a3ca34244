import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, verifyWebhook, webhookHeaders } from './webhook-signature.ts';

const body = JSON.stringify({ type: 'message.delivered', timestamp: '2026-11-21T10:30:00.000Z', data: { id: 'm1' } });

describe('Standard Webhooks signatures', () => {
  it('are verified by the standardwebhooks library', () => {
    const secret = generateWebhookSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secret], 'msg_1', timestamp, body);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('do not verify a tampered body or a stale timestamp', () => {
    const secret = generateWebhookSecret();
    const fresh = webhookHeaders([secret], 'msg_2', Math.floor(Date.now() / 1000), body);
    expect(() => new Webhook(secret).verify(body.replace('m1', 'm2'), fresh)).toThrow();
    const stale = webhookHeaders([secret], 'msg_2', Math.floor(Date.now() / 1000) - 3600, body);
    expect(() => new Webhook(secret).verify(body, stale)).toThrow();
    expect(verifyWebhook(secret, { id: 'msg_2', timestamp: stale['webhook-timestamp']!, signature: stale['webhook-signature']! }, body)).toBe(false);
  });

  it('carry one signature per secret during a rotation, each verifying on its own', () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const headers = webhookHeaders([current, previous], 'msg_3', Math.floor(Date.now() / 1000), body);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it('verifies its own signatures and refuses another secret', () => {
    const secret = generateWebhookSecret();
    const h = webhookHeaders([secret], 'msg_4', Math.floor(Date.now() / 1000), body);
    const parts = { id: 'msg_4', timestamp: h['webhook-timestamp']!, signature: h['webhook-signature']! };
    expect(verifyWebhook(secret, parts, body)).toBe(true);
    expect(verifyWebhook(generateWebhookSecret(), parts, body)).toBe(false);
  });
});
