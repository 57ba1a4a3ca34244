/**
 * Fuzz of the contacts and groups routes: random and hostile bodies, queries and ids, valid ones
 * mixed in, must never get a 5xx, and every 4xx must be `{error, message}`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, uniquePhone } from '@smsgw/api/testing';
import { IdPool, hostileString, hostileValue, mostly, pathId, plausible, shaped } from './arbitraries.ts';
import { fuzz, startFuzzApi, type FuzzApi } from './harness.ts';
import { route, userAuth } from './requests.ts';

let api: FuzzApi;
let headers: Record<string, string>;
let auth: ReturnType<typeof userAuth>;
const contacts = new IdPool();
const groups = new IdPool();

beforeAll(async () => {
  api = await startFuzzApi();
  const { apiKey } = await createTestUser(api.db, { devices: 0 });
  headers = { 'x-api-key': apiKey };
  auth = userAuth(apiKey, api.config.JWT_SECRET);
  for (let i = 0; i < 6; i++) {
    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', { name: `contact ${i}`, phone: uniquePhone() });
    expect(res.statusCode).toBe(201);
    contacts.add(res.json().id);
  }
  for (let i = 0; i < 3; i++) {
    const res = await call(api.app, apiKey, 'POST', '/api/v1/groups', { name: `group ${i}` });
    expect(res.statusCode).toBe(201);
    groups.add(res.json().id);
    await call(api.app, apiKey, 'POST', `/api/v1/groups/${res.json().id}/members`, { contact_ids: contacts.ids.slice(i, i + 3) });
  }
});
afterAll(async () => {
  await api?.close();
});

const contactBody = () => shaped({ name: plausible.name, phone: plausible.phone });
const importRow = fc.oneof({ weight: 4, arbitrary: contactBody() }, { weight: 1, arbitrary: hostileValue });

/** CSV text: a header row (usually name,phone) and rows of plausible or hostile cells, quoted or not. */
const csv = fc
  .tuple(
    fc.constantFrom('name,phone', 'phone,name', '\ufeffname,phone', 'name', 'name,phone,extra', 'name,name', '', '"name","phone"', 'name;phone'),
    fc.array(fc.tuple(fc.oneof(plausible.name, hostileString), fc.oneof(plausible.phone, hostileString), fc.constantFrom(',', ';', '\t', ',,')), {
      maxLength: 6,
    }),
    fc.constantFrom('\n', '\r\n', '\r'),
    fc.boolean(),
  )
  .map(([header, rows, eol, quoted]) => {
    const cell = (text: string) => (quoted ? `"${text.replaceAll('"', '""')}"` : text);
    return [header, ...rows.map(([name, phone, sep]) => `${cell(name)}${sep}${cell(phone)}`)].join(eol);
  });

const ids = () => pathId(contacts);
const gids = () => pathId(groups);
const pages = { limit: plausible.limit, offset: plausible.offset };

describe('contacts routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const requests = fc.oneof(
      route({ method: 'POST', path: '/api/v1/contacts', body: contactBody(), headers: auth, creates: contacts }),
      route({ method: 'GET', path: '/api/v1/contacts', query: { ...pages, phone: plausible.phone, name: plausible.name }, headers: auth }),
      route({ method: 'GET', path: ids().map((id) => `/api/v1/contacts/${id}`), headers: auth }),
      route({ method: 'PATCH', path: ids().map((id) => `/api/v1/contacts/${id}`), body: contactBody(), headers: auth }),
      route({ method: 'DELETE', path: ids().map((id) => `/api/v1/contacts/${id}`), headers: auth }),
      route({ method: 'POST', path: '/api/v1/contacts/import', body: fc.array(importRow, { maxLength: 6 }), headers: auth }),
    );
    await fuzz(api, requests, { numRuns: 250 });
  });

  it('answer every CSV import below 500, and every 4xx as {error, message}', async () => {
    const requests = fc.tuple(csv, fc.constantFrom('text/csv', 'text/csv; charset=utf-8', 'text/csv; charset=latin1', 'TEXT/CSV')).map(([text, type]) => ({
      method: 'POST' as const,
      url: '/api/v1/contacts/import',
      headers: { ...headers, 'content-type': type },
      payload: text,
    }));
    await fuzz(api, requests, { numRuns: 120 });
  });
});

describe('groups routes under random and hostile input', () => {
  it('answer every request below 500, and every 4xx as {error, message}', async () => {
    const members = shaped({
      contact_ids: fc.array(mostly(contacts.arbitrary(), fc.uuid(), hostileString), { maxLength: 4 }),
      phones: fc.array(fc.oneof(plausible.phone, hostileString), { maxLength: 4 }),
    });
    const requests = fc.oneof(
      route({ method: 'POST', path: '/api/v1/groups', body: shaped({ name: plausible.name }), headers: auth, creates: groups }),
      route({ method: 'GET', path: '/api/v1/groups', query: pages, headers: auth }),
      route({ method: 'GET', path: gids().map((id) => `/api/v1/groups/${id}`), headers: auth }),
      route({ method: 'PATCH', path: gids().map((id) => `/api/v1/groups/${id}`), body: shaped({ name: plausible.name }), headers: auth }),
      route({ method: 'DELETE', path: gids().map((id) => `/api/v1/groups/${id}`), headers: auth }),
      route({ method: 'POST', path: gids().map((id) => `/api/v1/groups/${id}/members`), body: members, headers: auth }),
      route({ method: 'GET', path: gids().map((id) => `/api/v1/groups/${id}/members`), query: pages, headers: auth }),
      route({ method: 'DELETE', path: fc.tuple(gids(), ids()).map(([id, contact]) => `/api/v1/groups/${id}/members/${contact}`), headers: auth }),
    );
    await fuzz(api, requests, { numRuns: 300 });
  });
});
