import { Type } from 'typebox';
import { parse as parseCsv } from 'csv-parse/sync';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isE164, isUuid } from '@smsgw/core';
import { DuplicatePhoneError, createContact, deleteContact, findContact, importContacts, listContacts, updateContact, type ContactRow } from '@smsgw/db';
import { IdParams, PageOf, Pagination, Timestamp, authErrors, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

export const MAX_IMPORT = 10_000;
const Name = Type.String({ maxLength: 200 });
const Phone = Type.String({ description: 'E.164, unique per user.' });

export const ContactRecord = Type.Object(
  { id: Type.String(), name: Type.String(), phone: Type.String(), created_at: Timestamp, updated_at: Timestamp },
  {
    $id: 'Contact',
    description: 'A saved recipient.',
    examples: [
      {
        id: '0195f4c1-0a1b-7c2d-8e3f-4a5b6c7d8e9f',
        name: 'Ada Lovelace',
        phone: '+15551234567',
        created_at: '2026-03-01T09:00:00.000Z',
        updated_at: '2026-03-01T09:00:00.000Z',
      },
    ],
  },
);

export function toContactRecord(c: ContactRow) {
  return { id: c.id, name: c.name, phone: c.phone, created_at: c.createdAt.toISOString(), updated_at: c.updatedAt.toISOString() };
}

const ImportError = Type.Object(
  {
    error: Type.String(),
    message: Type.String(),
    errors: Type.Optional(Type.Array(Type.Object({ index: Type.Integer(), message: Type.String() }))),
  },
  { $id: 'ImportError', description: 'An import refused: the problem of each bad row, by its index (from 0).' },
);

/** Checks every row of an import; returns the rows, or the problems of each bad row by its index. */
function checkRows(rows: unknown[]): { contacts: { name: string; phone: string }[]; errors: { index: number; message: string }[] } {
  const contacts: { name: string; phone: string }[] = [];
  const errors: { index: number; message: string }[] = [];
  const seen = new Map<string, number>();
  rows.forEach((row, index) => {
    const { name, phone, ...rest } = (row ?? {}) as Record<string, unknown>;
    const extra = Object.keys(rest);
    if (typeof row !== 'object' || row === null || Array.isArray(row)) errors.push({ index, message: 'A row must be an object {name, phone}.' });
    else if (typeof phone !== 'string' || !isE164(phone)) errors.push({ index, message: 'Phone number must be in E.164 format' });
    else if (name !== undefined && typeof name !== 'string') errors.push({ index, message: "'name' must be a string." });
    else if (typeof name === 'string' && name.length > 200) errors.push({ index, message: "'name' is longer than 200 characters." });
    else if (extra.length > 0) errors.push({ index, message: `Unknown field '${extra[0]}'.` });
    else if (seen.has(phone)) errors.push({ index, message: `Duplicate of row ${seen.get(phone)}: ${phone}.` });
    else {
      seen.set(phone, index);
      contacts.push({ name: (name as string | undefined) ?? '', phone });
    }
  });
  return { contacts, errors };
}

/** `/api/v1/contacts`: the caller's saved recipients, and their bulk import (JSON or CSV). */
const contactRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);
  app.addContentTypeParser('text/csv', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  async function own(userId: string, id: string): Promise<ContactRow> {
    const contact = isUuid(id) ? await findContact(app.sql, { userId, id }) : null;
    if (!contact) throw new AppError('not_found', 'Contact not found');
    return contact;
  }
  function checkPhone(phone: string | undefined) {
    if (phone !== undefined && !isE164(phone)) throw new AppError('invalid_phone_number');
  }
  const duplicate = (error: unknown): never => {
    if (error instanceof DuplicatePhoneError) throw new AppError('contact_exists');
    throw error;
  };

  app.post(
    '/api/v1/contacts',
    {
      schema: {
        tags: ['contacts'],
        summary: 'Create a contact',
        body: Type.Object({ name: Name, phone: Phone }, { additionalProperties: false, examples: [{ name: 'Ada Lovelace', phone: '+15551234567' }] }),
        response: { 201: ContactRecord, ...errors('invalid_request', 'invalid_phone_number', 'contact_exists'), ...authErrors },
      },
    },
    async (request, reply) => {
      checkPhone(request.body.phone);
      const contact = await createContact(app.sql, { userId: request.auth.user.id, ...request.body }).catch(duplicate);
      return reply.status(201).send(toContactRecord(contact));
    },
  );

  app.get(
    '/api/v1/contacts',
    {
      schema: {
        tags: ['contacts'],
        summary: 'List contacts, newest first; filter by exact phone or by name (contains, any case)',
        querystring: Type.Object({ phone: Type.Optional(Type.String()), name: Type.Optional(Type.String()), ...Pagination.properties }),
        response: { 200: PageOf(ContactRecord, 'ContactPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listContacts(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(toContactRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/contacts/:id',
    { schema: { tags: ['contacts'], summary: 'Get a contact', params: IdParams, response: { 200: ContactRecord, ...errors('not_found'), ...authErrors } } },
    async (request) => toContactRecord(await own(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/contacts/:id',
    {
      schema: {
        tags: ['contacts'],
        summary: 'Change a contact',
        params: IdParams,
        body: Type.Object(
          { name: Type.Optional(Name), phone: Type.Optional(Phone) },
          { additionalProperties: false, minProperties: 1, examples: [{ name: 'Ada King' }] },
        ),
        response: { 200: ContactRecord, ...errors('invalid_request', 'invalid_phone_number', 'not_found', 'contact_exists'), ...authErrors },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      await own(userId, request.params.id);
      checkPhone(request.body.phone);
      const contact = await updateContact(app.sql, { userId, id: request.params.id, ...request.body }).catch(duplicate);
      if (!contact) throw new AppError('not_found', 'Contact not found');
      return toContactRecord(contact);
    },
  );

  app.delete(
    '/api/v1/contacts/:id',
    {
      schema: {
        tags: ['contacts'],
        summary: 'Delete a contact (and its group memberships)',
        params: IdParams,
        response: { 204: Type.Null(), ...errors('not_found'), ...authErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteContact(app.sql, { userId: request.auth.user.id, id }))) throw new AppError('not_found', 'Contact not found');
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/contacts/import',
    {
      schema: {
        tags: ['contacts'],
        summary: `Import up to ${MAX_IMPORT} contacts, all or nothing: a JSON array of {name, phone}, or text/csv with a header row name,phone. A phone that exists takes the new name.`,
        body: Type.Union([
          Type.Array(Type.Unknown(), {
            maxItems: MAX_IMPORT,
            description: 'Rows {name, phone}; each is checked and a bad one named by its index.',
            examples: [
              [
                { name: 'Grace Hopper', phone: '+15551234568' },
                { name: 'Alan Turing', phone: '+15551234569' },
              ],
            ],
          }),
          Type.String({
            contentMediaType: 'text/csv',
            description: 'CSV with a header row name,phone.',
            examples: ['name,phone\nGrace Hopper,+15551234568\n'],
          }),
        ]),
        response: { 200: Type.Object({ created: Type.Integer(), updated: Type.Integer() }), 400: ImportError, ...authErrors },
      },
    },
    async (request, reply) => {
      let rows: unknown[];
      if (typeof request.body === 'string') {
        try {
          rows = parseCsv(request.body, { columns: true, skip_empty_lines: true, trim: true, bom: true }) as unknown[];
        } catch (error) {
          throw new AppError('invalid_request', `The CSV is not valid: ${(error as Error).message}`);
        }
        if (rows.length > MAX_IMPORT) throw new AppError('invalid_request', `At most ${MAX_IMPORT} contacts per import.`);
      } else rows = request.body;
      const { contacts, errors } = checkRows(rows);
      if (errors.length > 0) {
        return reply.status(400).send({
          error: 'invalid_request',
          message: `${errors.length} of ${rows.length} rows are not valid; nothing was imported.`,
          errors,
        });
      }
      return importContacts(app.sql, { userId: request.auth.user.id, contacts });
    },
  );
};
export default contactRoutes;
