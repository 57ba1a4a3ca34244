import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { call, sendFootprint, uniquePhone as phone, type TestApi } from './test-api.ts';

/**
 * Requests of the send-template tests (routes/sms/send-template*.int.test.ts) against the API that
 * `get` gives: templates, contacts and groups made through the API, a refusal that changes nothing,
 * and the stored texts.
 */
export function templateRequests(get: () => TestApi) {
  function sendTemplate(apiKey: string, body: unknown) {
    return call(get().app, apiKey, 'POST', '/api/sms/send-template', body);
  }

  async function createTemplate(apiKey: string, body: string): Promise<string> {
    const res = await call(get().app, apiKey, 'POST', '/api/v1/templates', { name: 'tpl', body });
    expect(res.statusCode).toBe(201);
    return res.json().id;
  }

  async function createContact(apiKey: string, name: string, to = phone()): Promise<string> {
    const res = await call(get().app, apiKey, 'POST', '/api/v1/contacts', { name, phone: to });
    expect(res.statusCode).toBe(201);
    return to;
  }

  /** A group of the user with these phones as members (added in this order). */
  async function createGroup(apiKey: string, phones: string[]): Promise<string> {
    const group = await call(get().app, apiKey, 'POST', '/api/v1/groups', { name: `g-${randomUUID().slice(0, 8)}` });
    expect(group.statusCode).toBe(201);
    const id: string = group.json().id;
    if (phones.length > 0) {
      const added = await call(get().app, apiKey, 'POST', `/api/v1/groups/${id}/members`, { phones });
      expect(added.statusCode).toBe(200);
    }
    return id;
  }

  /** Sends the template request and expects exactly `status` and the raw body `rawBody`, with nothing stored, charged or enqueued. */
  async function expectRefusedExactly(user: { apiKey: string; userId: string }, payload: unknown, status: number, rawBody: string) {
    const before = await sendFootprint(get(), user.userId);
    const res = await sendTemplate(user.apiKey, payload);
    expect({ status: res.statusCode, body: res.body }).toEqual({ status, body: rawBody });
    expect(await sendFootprint(get(), user.userId)).toEqual(before);
  }

  /** The stored text of each message, by recipient. */
  async function textsByRecipient(userId: string): Promise<Record<string, string>> {
    const rows = await get().db.message.findMany({ where: { userId } });
    return Object.fromEntries(rows.map((r) => [r.to, r.body]));
  }

  return { sendTemplate, createTemplate, createContact, createGroup, expectRefusedExactly, textsByRecipient };
}
