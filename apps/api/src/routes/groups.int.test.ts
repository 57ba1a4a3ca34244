import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTestUser, startTestApi, uniquePhone as phone, type TestApi, type Method } from '../testing/test-api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

interface Group {
  id: string;
  name: string;
  member_count: number;
  created_at: string;
  updated_at: string;
}

async function createGroup(apiKey: string, name = `group-${randomUUID().slice(0, 8)}`): Promise<Group> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/groups', { name });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function createContact(apiKey: string, name = 'someone', to = phone()): Promise<{ id: string; name: string; phone: string }> {
  const res = await call(api.app, apiKey, 'POST', '/api/v1/contacts', { name, phone: to });
  expect(res.statusCode).toBe(201);
  return res.json();
}

const NOT_FOUND = { error: 'not_found', message: 'Group not found' };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('groups CRUD', () => {
  it('creates a group with 201 and exactly {id, name, member_count: 0, created_at, updated_at}', async () => {
    const { apiKey } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/groups', { name: 'Customers' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      id: expect.any(String),
      name: 'Customers',
      member_count: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${res.json().id}`)).json()).toEqual(res.json());
  });

  it.each([
    ['an empty name', { name: '' }],
    ['a name over 200 characters', { name: 'g'.repeat(201) }],
    ['a missing name', {}],
    ['an unknown field', { name: 'g', color: 'red' }],
  ])('refuses %s with 400 invalid_request', async (_what, payload) => {
    const { apiKey, userId } = await createTestUser(api.db);
    const res = await call(api.app, apiKey, 'POST', '/api/v1/groups', payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', message: expect.any(String) });
    expect(await api.db.group.count({ where: { userId } })).toBe(0);
  });

  it('lists groups newest first with member counts and pagination', async () => {
    const { apiKey } = await createTestUser(api.db);
    const a = await createGroup(apiKey, 'a');
    const b = await createGroup(apiKey, 'b');
    await call(api.app, apiKey, 'POST', `/api/v1/groups/${a.id}/members`, { phones: [phone(), phone()] });
    const c = await createGroup(apiKey, 'c');

    const list = (await call(api.app, apiKey, 'GET', '/api/v1/groups')).json();
    expect(list).toEqual({ data: [c, b, { ...a, member_count: 2 }], total: 3, limit: 20, offset: 0 });
    expect((await call(api.app, apiKey, 'GET', '/api/v1/groups?limit=1&offset=1')).json()).toEqual({ data: [b], total: 3, limit: 1, offset: 1 });
  });

  it('renames a group and refuses an empty name', async () => {
    const { apiKey } = await createTestUser(api.db);
    const group = await createGroup(apiKey, 'before');
    const res = await call(api.app, apiKey, 'PATCH', `/api/v1/groups/${group.id}`, { name: 'after' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: group.id, name: 'after', member_count: 0, created_at: group.created_at });
    const bad = await call(api.app, apiKey, 'PATCH', `/api/v1/groups/${group.id}`, { name: '' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_request');
  });

  it('deletes a group with 204; its contacts stay', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { phones: [phone()] });

    const res = await call(api.app, apiKey, 'DELETE', `/api/v1/groups/${group.id}`);

    expect(res.statusCode).toBe(204);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).statusCode).toBe(404);
    expect(await api.db.contact.count({ where: { userId } })).toBe(1);
  });

  it.each([
    ['an id that does not exist', () => randomUUID()],
    ['a malformed id', () => 'nope'],
  ])('answers 404 Group not found for %s on every group route', async (_what, id) => {
    const { apiKey } = await createTestUser(api.db);
    const gid = id();
    const contact = await createContact(apiKey);
    const calls: [Method, string, unknown?][] = [
      ['GET', `/api/v1/groups/${gid}`],
      ['PATCH', `/api/v1/groups/${gid}`, { name: 'x' }],
      ['DELETE', `/api/v1/groups/${gid}`],
      ['POST', `/api/v1/groups/${gid}/members`, { contact_ids: [contact.id] }],
      ['GET', `/api/v1/groups/${gid}/members`],
      ['DELETE', `/api/v1/groups/${gid}/members/${contact.id}`],
    ];
    for (const [method, url, payload] of calls) {
      const res = await call(api.app, apiKey, method, url, payload);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 404, body: NOT_FOUND });
    }
  });

  it("answers 404 for another user's group on every group route and changes nothing", async () => {
    const owner = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const group = await createGroup(owner.apiKey, 'private');
    const member = await createContact(owner.apiKey);
    await call(api.app, owner.apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [member.id] });
    const theirs = await createContact(other.apiKey);
    const calls: [Method, string, unknown?][] = [
      ['GET', `/api/v1/groups/${group.id}`],
      ['PATCH', `/api/v1/groups/${group.id}`, { name: 'stolen' }],
      ['POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [theirs.id] }],
      ['POST', `/api/v1/groups/${group.id}/members`, { phones: [phone()] }],
      ['GET', `/api/v1/groups/${group.id}/members`],
      ['DELETE', `/api/v1/groups/${group.id}/members/${member.id}`],
      ['DELETE', `/api/v1/groups/${group.id}`],
    ];
    for (const [method, url, payload] of calls) {
      const res = await call(api.app, other.apiKey, method, url, payload);
      expect({ method, url, status: res.statusCode, body: res.json() }).toEqual({ method, url, status: 404, body: NOT_FOUND });
    }
    expect((await call(api.app, other.apiKey, 'GET', '/api/v1/groups')).json()).toEqual({ data: [], total: 0, limit: 20, offset: 0 });
    expect((await call(api.app, owner.apiKey, 'GET', `/api/v1/groups/${group.id}`)).json()).toMatchObject({ name: 'private', member_count: 1 });
    expect(await api.db.contact.count({ where: { userId: other.userId } })).toBe(1);
  });
});

describe('group members', () => {
  it('adds members by contact id and by phone; a phone with no contact becomes a contact with an empty name', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const known = await createContact(apiKey, 'Known');
    const newPhone = phone();

    const res = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [known.id], phones: [newPhone, known.phone] });

    expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 200, body: { added: 2, member_count: 2 } });
    const created = await api.db.contact.findFirstOrThrow({ where: { userId, phone: newPhone } });
    expect(created.name).toBe('');
    const members = (await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members`)).json();
    expect(members.data.map((m: { phone: string }) => m.phone).sort()).toEqual([known.phone, newPhone].sort());
    expect(members.total).toBe(2);
    expect(await api.db.contact.count({ where: { userId } })).toBe(2);
  });

  it('does not duplicate a member added twice, by id or by phone', async () => {
    const { apiKey } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const contact = await createContact(apiKey);
    const p = phone();

    const first = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [contact.id, contact.id], phones: [p, p] });
    expect(first.json()).toEqual({ added: 2, member_count: 2 });
    const again = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [contact.id], phones: [p, contact.phone] });
    expect(again.json()).toEqual({ added: 0, member_count: 2 });

    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).json().member_count).toBe(2);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members`)).json().total).toBe(2);
  });

  it("refuses another user's contact id (and an unknown or malformed id) with 400 contact_not_found and adds nothing", async () => {
    const { apiKey } = await createTestUser(api.db);
    const other = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const mine = await createContact(apiKey);
    const theirs = await createContact(other.apiKey);

    for (const bad of [theirs.id, randomUUID(), 'not-a-uuid']) {
      const res = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [mine.id, bad], phones: [phone()] });
      expect({ status: res.statusCode, body: res.json() }).toEqual({ status: 400, body: { error: 'contact_not_found', message: `Contact ${bad} not found.` } });
    }
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).json().member_count).toBe(0);
    expect(await api.db.groupMember.count({ where: { contactId: theirs.id } })).toBe(0);
  });

  it('refuses a bad phone with 400 invalid_phone_number and adds and creates nothing', async () => {
    const { apiKey, userId } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const res = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { phones: [phone(), '0044123'] });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 400,
      body: { error: 'invalid_phone_number', message: 'Phone number must be in E.164 format' },
    });
    expect(await api.db.contact.count({ where: { userId } })).toBe(0);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).json().member_count).toBe(0);
  });

  it('refuses an empty body and unknown fields with 400 invalid_request', async () => {
    const { apiKey } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    for (const payload of [{}, { members: [] }, { phones: 'x' }]) {
      const res = await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('lists members in the order they joined, paginated, 20 by default', async () => {
    const { apiKey } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const phones = Array.from({ length: 23 }, phone);
    // Added one request at a time, so that each joins after the one before.
    for (const p of phones) {
      expect((await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { phones: [p] })).statusCode).toBe(200);
    }

    const first = (await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members`)).json();
    expect({ total: first.total, limit: first.limit, offset: first.offset }).toEqual({ total: 23, limit: 20, offset: 0 });
    const second = (await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members?offset=20`)).json();
    expect([...first.data, ...second.data].map((m: { phone: string }) => m.phone)).toEqual(phones);
    expect(first.data[0]).toEqual({
      id: expect.any(String),
      name: '',
      phone: phones[0],
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    });
  });

  it('removes a member with 204 (the contact stays); removing it again is 404', async () => {
    const { apiKey } = await createTestUser(api.db);
    const group = await createGroup(apiKey);
    const [a, b] = [await createContact(apiKey), await createContact(apiKey)];
    await call(api.app, apiKey, 'POST', `/api/v1/groups/${group.id}/members`, { contact_ids: [a.id, b.id] });

    const res = await call(api.app, apiKey, 'DELETE', `/api/v1/groups/${group.id}/members/${a.id}`);
    expect(res.statusCode).toBe(204);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}`)).json().member_count).toBe(1);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/groups/${group.id}/members`)).json().data.map((m: { id: string }) => m.id)).toEqual([b.id]);
    expect((await call(api.app, apiKey, 'GET', `/api/v1/contacts/${a.id}`)).statusCode).toBe(200);

    for (const contactId of [a.id, randomUUID(), 'junk']) {
      const again = await call(api.app, apiKey, 'DELETE', `/api/v1/groups/${group.id}/members/${contactId}`);
      expect({ status: again.statusCode, body: again.json() }).toEqual({ status: 404, body: { error: 'not_found', message: 'Member not found' } });
    }
  });
});
