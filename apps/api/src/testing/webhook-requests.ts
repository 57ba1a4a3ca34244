import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { MESSAGE_EVENT_TYPES, type Resolver } from '@smsgw/core';
import { call, type Method, type TestApi } from './test-api.ts';

/** What the webhook route tests (routes/webhook*.int.test.ts) share: a stub DNS, the records, requests. */
// The stub DNS: names not listed do not resolve.
const HOSTS: Record<string, string[]> = {
  'hooks.example': ['93.184.215.14'],
  'other.example': ['93.184.215.15'],
  'internal.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '10.1.2.3'],
  localhost: ['127.0.0.1', '::1'],
};
export const stubResolver: Resolver = async (hostname) => {
  const addresses = HOSTS[hostname];
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return addresses;
};

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}
export interface Delivery {
  id: string;
  type: string;
  message_id: string | null;
  state: string;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  last_attempt_at: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export const URL_OK = 'https://hooks.example/smsgw';
export const NOT_FOUND = { error: 'not_found', message: 'Webhook not found' };
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Requests to the API that `get` gives: an endpoint created, and its test event sent. */
export function webhookRequests(get: () => TestApi) {
  async function createWebhook(apiKey: string, body: Record<string, unknown> = {}): Promise<Webhook & { secret: string }> {
    const res = await call(get().app, apiKey, 'POST', '/api/v1/webhooks', { url: URL_OK, events: [...MESSAGE_EVENT_TYPES], ...body });
    expect(res.statusCode).toBe(201);
    return res.json();
  }

  async function sendTest(apiKey: string, webhookId: string): Promise<Delivery> {
    const res = await call(get().app, apiKey, 'POST', `/api/v1/webhooks/${webhookId}/test`);
    expect(res.statusCode).toBe(202);
    return res.json();
  }

  return { createWebhook, sendTest };
}

/** The webhook's record as GET shows it: the create response without the secret. */
export function withoutSecret({ secret: _secret, ...record }: Webhook & { secret: string }): Webhook {
  return record;
}

/** Every route of one webhook, with a valid body where one is needed. */
export function routesOf(id: string, deliveryId: string = randomUUID()): [Method, string, unknown?][] {
  return [
    ['GET', `/api/v1/webhooks/${id}`],
    ['PATCH', `/api/v1/webhooks/${id}`, { description: 'stolen' }],
    ['POST', `/api/v1/webhooks/${id}/rotate-secret`],
    ['POST', `/api/v1/webhooks/${id}/test`],
    ['GET', `/api/v1/webhooks/${id}/deliveries`],
    ['POST', `/api/v1/webhooks/${id}/deliveries/${deliveryId}/retry`],
    ['DELETE', `/api/v1/webhooks/${id}`],
  ];
}
