import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, uniquePhone as phone, type TestApi } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function createContact(apiKey: string, body: { name: string; phone: string }) {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', body);
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; name: string; phone: string; created_at: string; updated_at: string };
}

const NOT_FOUND = { error: 'not_found', message: 'Contact not found' };
const INVALID_PHONE = { error: 'invalid_phone_number', message: 'Phone number must be in E.164 format' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/v1/contacts', () => {
  it('creates a contact and answers 201 with exactly {id, name, phone, created_at, updated_at}', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', { name: 'Ada Lovelace', phone: to });

    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      name: 'Ada Lovelace',
      phone: to,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    const rows = await api.db.contact.findMany({ where: { userId } });
    expect(rows.map((r) => [r.id, r.name, r.phone])).toEqual([[body.id, 'Ada Lovelace', to]]);
  });

  it.each(['15550001111', '+0123456', '+1', '+1234567890123456', '+1 555 000', ''])(
    'refuses the phone %j with 400 invalid_phone_number and stores nothing',
    async (bad) => {
      const { apiKey, userId } = await createTestUser(api.db);
      const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', { name: 'x', phone: bad });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: INVALID_PHONE });
      expect(await api.db.contact.count({ where: { userId } })).toBe(0);
    },
  );

  it('refuses a second contact with the same phone with 409 contact_exists', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const to = phone();
    await createContact(apiKey, { name: 'first', phone: to });

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', { name: 'second', phone: to });

    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 409,
      body: { error: 'contact_exists', message: 'A contact with this phone number already exists.' },
    });
    expect((await api.db.contact.findMany({ where: { userId } })).map((c) => c.name)).toEqual(['first']);
  });

  it('lets two users each have a contact with the same phone', async () => {
    const a = await createTestUser(api.db);
    const b = await createTestUser(api.db);
    const to = phone();
    await createContact(a.apiKey, { name: 'a', phone: to });
    await createContact(b.apiKey, { name: 'b', phone: to });
  });

  it.each([
    ['an unknown field', { name: 'x', phone: '+15550001111', email: 'x@example.com' }],
    ['a missing phone', { name: 'x' }],
    ['a missing name', { phone: '+15550001111' }],
    ['a non-string name', { name: 5, phone: '+15550001111' }],
    ['a name over 200 characters', { name: 'n'.repeat(201), phone: '+15550001111' }],
  ])('refuses %s with 400 invalid_request', async (_what, payload) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(await api.db.contact.count({ where: { userId } })).toBe(0);
  });

  it('refuses a request without credentials with 401', async () => {
    const res = await api.app.inject({ method: 'POST', url: '/api/v1/contacts', payload: { name: 'x', phone: phone() } });
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 401, body: { error: 'unauthorized', message: 'Authentication required' } });
  });
});

describe('GET, PATCH and DELETE /api/v1/contacts/:id', () => {
  it('gets a contact by id', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = await createContact(apiKey, { name: 'Grace', phone: phone() });
    const res = await call(api.app, apiKey, 'GET', `/api/v1/contacts/${created.id}`);
    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: created });
  });

  it('changes the name and the phone, keeps the rest, and moves updated_at', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = await createContact(apiKey, { name: 'Old', phone: phone() });
    const newPhone = phone();

    const renamed = await call(api.app, apiKey, 'PATCH', `/api/v1/contacts/${created.id}`, { name: 'New' });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json()).toMatchObject({ id: created.id, name: 'New', phone: created.phone, created_at: created.created_at });

    const moved = await call(api.app, apiKey, 'PATCH', `/api/v1/contacts/${created.id}`, { phone: newPhone });
    expect(moved.statusCode).toBe(200);
    expect(moved.json()).toMatchObject({ id: created.id, name: 'New', phone: newPhone });
    expect(Date.parse(moved.json().updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));

    const got = await call(api.app, apiKey, 'GET', `/api/v1/contacts/${created.id}`);
    expect(got.json()).toEqual(moved.json());
  });

  it('refuses a change to a bad phone (400), to a phone of another contact (409), an empty or unknown-field body (400)', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createContact(apiKey, { name: 'a', phone: phone() });
    const b = await createContact(apiKey, { name: 'b', phone: phone() });
    const url = `/api/v1/contacts/${a.id}`;

    const bad = await call(api.app, apiKey, 'PATCH', url, { phone: '555' });
    expect({ status: bad.statusCode, body: bad.json() }).toEqual({ status: 400, body: INVALID_PHONE });
    const taken = await call(api.app, apiKey, 'PATCH', url, { phone: b.phone });
    expect({ status: taken.statusCode, body: taken.json() }).toEqual({
      status: 409,
      body: { error: 'contact_exists', message: 'A contact with this phone number already exists.' },
    });
    for (const payload of [{}, { nickname: 'x' }]) {
      const res = await call(api.app, apiKey, 'PATCH', url, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await call(api.app, apiKey, 'GET', url)).json()).toEqual(a);
  });

  it('deletes a contact with 204, after which it is 404 everywhere', async () => {
    const { apiKey } = await createTestUser(api.db);
    const created = await createContact(apiKey, { name: 'gone', phone: phone() });
    const url = `/api/v1/contacts/${created.id}`;

    const del = await call(api.app, apiKey, 'DELETE', url);
    expect(del.statusCode).toBe(204);
    expect(del.body).toBe('');
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });

  it.each([
    ['an id that does not exist', () => randomUUID()],
    ['a malformed id', () => 'not-a-uuid'],
  ])('answers 404 for %s on GET, PATCH and DELETE', async (_what, id) => {
    const { apiKey } = await createTestUser(api.db);
    const url = `/api/v1/contacts/${id()}`;
    for (const [method, payload] of [['GET'], ['PATCH', { name: 'x' }], ['DELETE']] as const) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
  });

  it("answers 404 for another user's contact on GET, PATCH and DELETE, and leaves it unchanged", async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const contact = await createContact(owner.apiKey, { name: 'private', phone: phone() });
    const url = `/api/v1/contacts/${contact.id}`;

    for (const [method, payload] of [['GET'], ['PATCH', { name: 'stolen' }], ['DELETE']] as const) {
      const res = await call(api.app, other.apiKey, method, url, payload);
      expect({ method, status: res.statusCode, body: res.json() }).toEqual({ method, status: 404, body: NOT_FOUND });
    }
    expect((await call(api.app, owner.apiKey, 'GET', url)).json()).toEqual(contact);
    const list = await call(api.app, other.apiKey, 'GET', `/api/v1/contacts?phone=${encodeURIComponent(contact.phone)}`);
    expect(list.json()).toEqual({ data: [], total: 0, limit: 20, offset: 0 });
  });

  it('removes a deleted contact from its groups (member_count drops, the member list no longer has it)', async () => {
    const { apiKey } = await createTestUser(api.db);
    const [keep, drop] = [phone(), phone()];
    const group = (await call(api.app, apiKey, 'POST', '/api/v1/groups', { name: 'g' })).json();
    const added = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { phones: [keep, drop] });
    expect(added.json()).toEqual({ added: 2, member_count: 2 });
    const dropped = (await call(api.app, apiKey, 'GET', `/api/v1/contacts?phone=${encodeURIComponent(drop)}`)).json().data[0];

    expect((await call(api.app, apiKey, 'DELETE', `/api/v1/contacts/${dropped.id}`)).statusCode).toBe(204);

    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).json().member_count).toBe(1);
    const members = (await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members`)).json();
    expect(members.data.map((m: { phone: string }) => m.phone)).toEqual([keep]);
  });
});

describe('GET /api/v1/contacts', () => {
  it('lists the newest first, 20 per page by default, with {data, total, limit, offset}', async () => {
    const { apiKey } = await createTestUser(api.db);
    const phones = Array.from({ length: 25 }, phone);
    const imported = await call(
      api.app,
      apiKey,
      'POST',
      '/api/v1/contacts/import',
      phones.map((p, i) => ({ name: `c${i}`, phone: p })),
    );
    expect(imported.json()).toEqual({ created: 25, updated: 0 });
    const latest = await createContact(apiKey, { name: 'latest', phone: phone() });

    const first = (await call(api.app, apiKey, 'GET', '/api/v1/contacts')).json();
    expect({ ...first, data: first.data.length }).toEqual({ data: 20, total: 26, limit: 20, offset: 0 });
    expect(first.data[0]).toEqual(latest);
    const second = (await call(api.app, apiKey, 'GET', '/api/v1/contacts?limit=20&offset=20')).json();
    expect({ ...second, data: second.data.length }).toEqual({ data: 6, total: 26, limit: 20, offset: 20 });

    const all = [...first.data, ...second.data].map((c: { phone: string }) => c.phone);
    expect(new Set(all).size).toBe(26);
    expect(all.sort()).toEqual([...phones, latest.phone].sort());
  });

  it('orders contacts created one after another newest first', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createContact(apiKey, { name: 'a', phone: phone() });
    const b = await createContact(apiKey, { name: 'b', phone: phone() });
    const c = await createContact(apiKey, { name: 'c', phone: phone() });
    const list = (await call(api.app, apiKey, 'GET', '/api/v1/contacts?limit=2')).json();
    expect(list).toEqual({ data: [c, b], total: 3, limit: 2, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/contacts?limit=2&offset=2')).json().data).toEqual([a]);
  });

  it('filters by exact phone and by name (contains, any case)', async () => {
    const { apiKey } = await createTestUser(api.db);
    const ada = await createContact(apiKey, { name: 'Ada Lovelace', phone: phone() });
    const grace = await createContact(apiKey, { name: 'Grace Hopper', phone: phone() });
    const adam = await createContact(apiKey, { name: 'ADAM', phone: phone() });

    const byPhone = (await call(api.app, apiKey, 'GET', `/api/v1/contacts?phone=${encodeURIComponent(grace.phone)}`)).json();
    expect(byPhone).toEqual({ data: [grace], total: 1, limit: 20, offset: 0 });
    const partialPhone = (await call(api.app, apiKey, 'GET', `/api/v1/contacts?phone=${encodeURIComponent(grace.phone.slice(0, -1))}`)).json();
    expect(partialPhone.total).toBe(0);

    const byName = (await call(api.app, apiKey, 'GET', '/api/v1/contacts?name=ada')).json();
    expect(byName).toEqual({ data: [adam, ada], total: 2, limit: 20, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/contacts?name=HOPP')).json().data).toEqual([grace]);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/contacts?name=ada&phone=${encodeURIComponent(ada.phone)}`)).json().data).toEqual([ada]);
  });

  it('takes %, _ and \\ in the name filter as the characters themselves, not as wildcards', async () => {
    const { apiKey } = await createTestUser(api.db);
    const percent = await createContact(apiKey, { name: '100% sure', phone: phone() });
    const underscore = await createContact(apiKey, { name: 'a_b', phone: phone() });
    const backslash = await createContact(apiKey, { name: 'back\\slash', phone: phone() });
    await createContact(apiKey, { name: '1000 sure', phone: phone() });
    await createContact(apiKey, { name: 'axb', phone: phone() });
    await createContact(apiKey, { name: 'backslash', phone: phone() });

    const names = async (filter: string) =>
      ((await call(api.app, apiKey, 'GET', `/api/v1/contacts?name=${encodeURIComponent(filter)}`)).json().data as { id: string }[]).map((c) => c.id);
    expect(await names('0%')).toEqual([percent.id]);
    expect(await names('a_b')).toEqual([underscore.id]);
    expect(await names('k\\s')).toEqual([backslash.id]);
    expect(await names('%')).toEqual([percent.id]);
  });

  it.each(['limit=0', 'limit=101', 'offset=-1', 'limit=abc'])('refuses the query %s with 400 invalid_request', async (query) => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'GET', `/api/v1/contacts?${query}`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
  });
});

describe('POST /api/v1/contacts/import', () => {
  it('imports a JSON array and answers {created, updated}', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const rows = [{ name: 'a', phone: phone() }, { name: 'b', phone: phone() }, { phone: phone() }];

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', rows);

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { created: 3, updated: 0 } });
    const stored = await api.db.contact.findMany({ where: { userId } });
    expect(stored.map((c) => [c.phone, c.name]).sort()).toEqual(rows.map((r) => [r.phone, r.name ?? '']).sort());
  });

  it('gives an existing phone the new name and counts it as updated', async () => {
    const { apiKey } = await createTestUser(api.db);
    const existing = await createContact(apiKey, { name: 'Old name', phone: phone() });
    const fresh = phone();

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', [
      { name: 'New name', phone: existing.phone },
      { name: 'Fresh', phone: fresh },
    ]);

    expect(res.json()).toEqual({ created: 1, updated: 1 });
    const got = (await call(api.app, apiKey, 'GET', `/api/v1/contacts/${existing.id}`)).json();
    expect(got).toMatchObject({ id: existing.id, name: 'New name', phone: existing.phone });
  });

  it('imports nothing and reports each bad row by index when any row is bad', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const existing = await createContact(apiKey, { name: 'keep', phone: phone() });
    const dup = phone();
    const rows = [
      { name: 'ok', phone: phone() },
      { name: 'bad phone', phone: '12345' },
      { name: 'first', phone: dup },
      { name: 'again', phone: dup },
      { name: 'extra', phone: phone(), email: 'x' },
      'not an object',
      { name: 7, phone: phone() },
      { name: 'rename', phone: existing.phone },
    ];

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', rows);

    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toEqual({ error: 'invalid_request', message: expect.any(String), errors: expect.any(Array) });
    expect(body.errors.map((e: { index: number }) => e.index)).toEqual([1, 3, 4, 5, 6]);
    for (const e of body.errors) expect(e).toEqual({ index: e.index, message: expect.any(String) });
    expect(body.errors[0].message).toBe('Phone number must be in E.164 format');
    expect(body.errors[1].message).toContain(dup);
    const stored = await api.db.contact.findMany({ where: { userId } });
    expect(stored.map((c) => [c.phone, c.name])).toEqual([[existing.phone, 'keep']]);
  });

  it('imports CSV with a header row name,phone sent as text/csv', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const [a, b] = [phone(), phone()];
    const csv = `name,phone\nAda Lovelace,${a}\n"Hopper, Grace",${b}\n`;

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', csv, { 'content-type': 'text/csv' });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { created: 2, updated: 0 } });
    const stored = await api.db.contact.findMany({ where: { userId }, orderBy: { phone: 'asc' } });
    expect(stored.map((c) => [c.phone, c.name])).toEqual(
      [
        [a, 'Ada Lovelace'],
        [b, 'Hopper, Grace'],
      ].sort((x, y) => x[0]!.localeCompare(y[0]!)),
    );
  });

  it('refuses a CSV with a bad row by its index and imports nothing', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const csv = `name,phone\nok,${phone()}\nbad,555\n`;
    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', csv, { 'content-type': 'text/csv' });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors).toEqual([{ index: 1, message: 'Phone number must be in E.164 format' }]);
    expect(await api.db.contact.count({ where: { userId } })).toBe(0);
  });

  it('imports 10,000 contacts in one request', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ name: `bulk ${i}`, phone: phone() }));

    const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', rows);

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { created: 10_000, updated: 0 } });
    expect(await api.db.contact.count({ where: { userId } })).toBe(10_000);
  });

  it('refuses 10,001 contacts (JSON or CSV) with 400 invalid_request and imports nothing', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const rows = Array.from({ length: 10_001 }, (_, i) => ({ name: `bulk ${i}`, phone: phone() }));

    const json = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', rows);
    expect(json.statusCode).toBe(400);
    expect(json.json().error).toBe('invalid_request');

    const csv = `name,phone\n${rows.map((r) => `${r.name},${r.phone}`).join('\n')}\n`;
    const fromCsv = await call(api.app, apiKey, 'POST', '/api/v1/contacts/import', csv, { 'content-type': 'text/csv' });
    expect(fromCsv.statusCode).toBe(400);
    expect(fromCsv.json().error).toBe('invalid_request');

    expect(await api.db.contact.count({ where: { userId } })).toBe(0);
  });
});
