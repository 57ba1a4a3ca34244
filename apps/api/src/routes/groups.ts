import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError, isE164, isUuid } from '@smsgw/core';
import {
  addGroupMembers,
  createGroup,
  deleteGroup,
  findGroup,
  foreignContactIds,
  listGroupMembers,
  listGroups,
  removeGroupMember,
  renameGroup,
  type GroupRow,
} from '@smsgw/db';
import { IdParams, PageOf, Pagination, Timestamp, authErrors, page } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';
import { ContactRecord, MAX_IMPORT, toContactRecord } from './contacts.ts';

const GroupRecord = Type.Object(
  { id: Type.String(), name: Type.String(), member_count: Type.Integer(), created_at: Timestamp, updated_at: Timestamp },
  {
    $id: 'Group',
    description: 'A group of contacts, to send to at once.',
    examples: [
      {
        id: '0195f4c1-3c4d-7e5f-8a6b-7c8d9e0f1a2b',
        name: 'Customers',
        member_count: 2,
        created_at: '2026-03-01T09:00:00.000Z',
        updated_at: '2026-03-01T09:00:00.000Z',
      },
    ],
  },
);
const Name = Type.String({ minLength: 1, maxLength: 200 });

function toRecord(g: GroupRow) {
  return { id: g.id, name: g.name, member_count: g.memberCount, created_at: g.createdAt.toISOString(), updated_at: g.updatedAt.toISOString() };
}

/** `/api/v1/groups`: named sets of contacts that a send can address with `group_ids`. */
const groupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  async function own(userId: string, id: string): Promise<GroupRow> {
    const group = isUuid(id) ? await findGroup(app.sql, { userId, id }) : null;
    if (!group) throw new AppError('not_found', 'Group not found');
    return group;
  }

  app.post(
    '/api/v1/groups',
    {
      schema: {
        tags: ['groups'],
        summary: 'Create a group',
        body: Type.Object({ name: Name }, { additionalProperties: false, examples: [{ name: 'Customers' }] }),
        response: { 201: GroupRecord, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request, reply) => reply.status(201).send(toRecord(await createGroup(app.sql, { userId: request.auth.user.id, name: request.body.name }))),
  );

  app.get(
    '/api/v1/groups',
    {
      schema: {
        tags: ['groups'],
        summary: 'List groups, newest first',
        querystring: Pagination,
        response: { 200: PageOf(GroupRecord, 'GroupPage'), ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { rows, total } = await listGroups(app.sql, { userId: request.auth.user.id, ...request.query });
      return page(rows.map(toRecord), total, request.query);
    },
  );

  app.get(
    '/api/v1/groups/:id',
    { schema: { tags: ['groups'], summary: 'Get a group', params: IdParams, response: { 200: GroupRecord, ...errors('not_found'), ...authErrors } } },
    async (request) => toRecord(await own(request.auth.user.id, request.params.id)),
  );

  app.patch(
    '/api/v1/groups/:id',
    {
      schema: {
        tags: ['groups'],
        summary: 'Rename a group',
        params: IdParams,
        body: Type.Object({ name: Name }, { additionalProperties: false, examples: [{ name: 'Regular customers' }] }),
        response: { 200: GroupRecord, ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const group = isUuid(request.params.id)
        ? await renameGroup(app.sql, { userId: request.auth.user.id, id: request.params.id, name: request.body.name })
        : null;
      if (!group) throw new AppError('not_found', 'Group not found');
      return toRecord(group);
    },
  );

  app.delete(
    '/api/v1/groups/:id',
    {
      schema: {
        tags: ['groups'],
        summary: 'Delete a group (its contacts stay)',
        params: IdParams,
        response: { 204: Type.Null(), ...errors('not_found'), ...authErrors },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!isUuid(id) || !(await deleteGroup(app.sql, { userId: request.auth.user.id, id }))) throw new AppError('not_found', 'Group not found');
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/v1/groups/:id/members',
    {
      schema: {
        tags: ['groups'],
        summary: 'Add members by contact id and/or phone (a phone with no contact yet creates one)',
        params: IdParams,
        body: Type.Object(
          {
            contact_ids: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_IMPORT })),
            phones: Type.Optional(Type.Array(Type.String(), { maxItems: MAX_IMPORT })),
          },
          { additionalProperties: false, minProperties: 1, examples: [{ phones: ['+15551234570'] }] },
        ),
        response: {
          200: Type.Object({ added: Type.Integer(), member_count: Type.Integer() }, { description: 'How many joined, and the members now.' }),
          ...errors('invalid_request', 'invalid_phone_number', 'contact_not_found', 'not_found'),
          ...authErrors,
        },
      },
    },
    async (request) => {
      const userId = request.auth.user.id;
      const group = await own(userId, request.params.id);
      const contactIds = [...new Set(request.body.contact_ids ?? [])];
      const phones = [...new Set(request.body.phones ?? [])];
      if (!phones.every(isE164)) throw new AppError('invalid_phone_number');
      const foreign = contactIds.find((id) => !isUuid(id)) ?? (await foreignContactIds(app.sql, { userId, contactIds }))[0];
      if (foreign !== undefined) throw new AppError('contact_not_found', `Contact ${foreign} not found.`);
      const added = await addGroupMembers(app.sql, { userId, groupId: group.id, contactIds, phones });
      return { added, member_count: group.memberCount + added };
    },
  );

  app.get(
    '/api/v1/groups/:id/members',
    {
      schema: {
        tags: ['groups'],
        summary: 'List the members of a group, in the order they joined',
        params: IdParams,
        querystring: Pagination,
        response: { 200: PageOf(ContactRecord, 'ContactPage'), ...errors('invalid_request', 'not_found'), ...authErrors },
      },
    },
    async (request) => {
      const group = await own(request.auth.user.id, request.params.id);
      const { rows, total } = await listGroupMembers(app.sql, { groupId: group.id, ...request.query });
      return page(rows.map(toContactRecord), total, request.query);
    },
  );

  app.delete(
    '/api/v1/groups/:id/members/:contactId',
    {
      schema: {
        tags: ['groups'],
        summary: 'Remove a member from a group (the contact stays)',
        params: Type.Object({ id: Type.String(), contactId: Type.String() }, { additionalProperties: false }),
        response: { 204: Type.Null(), ...errors('not_found'), ...authErrors },
      },
    },
    async (request, reply) => {
      const group = await own(request.auth.user.id, request.params.id);
      const { contactId } = request.params;
      if (!isUuid(contactId) || !(await removeGroupMember(app.sql, { groupId: group.id, contactId }))) {
        throw new AppError('not_found', 'Member not found');
      }
      return reply.status(204).send(null);
    },
  );
};
export default groupRoutes;
