import { newId } from '@smsgw/core';
import type { Sql, SqlPool } from './sql.ts';
import { CONTACT_COLUMNS, type ContactRow } from './contacts.ts';
import { inTransaction } from './sql.ts';

export interface GroupRow {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  memberCount: number;
}

// The member count beside each group (group_members is indexed by group_id first).
const GROUP_COLUMNS = `g.id, g.name, g.created_at AS "createdAt", g.updated_at AS "updatedAt",
  (SELECT count(*)::int FROM group_members m WHERE m.group_id = g.id) AS "memberCount"`;

export async function createGroup(sql: SqlPool, o: { userId: string; name: string }): Promise<GroupRow> {
  const { rows } = await sql.query<GroupRow>(
    `INSERT INTO groups AS g (id, user_id, name, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) RETURNING ${GROUP_COLUMNS}`,
    [newId(), o.userId, o.name, new Date()],
  );
  return rows[0]!;
}

export async function findGroup(sql: SqlPool, o: { userId: string; id: string }): Promise<GroupRow | null> {
  const { rows } = await sql.query<GroupRow>(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.id = $1 AND g.user_id = $2`, [o.id, o.userId]);
  return rows[0] ?? null;
}

export async function listGroups(sql: SqlPool, o: { userId: string; limit: number; offset: number }): Promise<{ rows: GroupRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<GroupRow>(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.user_id = $1 ORDER BY g.created_at DESC, g.id DESC LIMIT $2 OFFSET $3`, [
      o.userId,
      o.limit,
      o.offset,
    ]),
    sql.query<{ n: number }>('SELECT count(*)::int AS n FROM groups WHERE user_id = $1', [o.userId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function renameGroup(sql: SqlPool, o: { userId: string; id: string; name: string }): Promise<GroupRow | null> {
  const { rows } = await sql.query<GroupRow>(`UPDATE groups g SET name = $3, updated_at = $4 WHERE g.id = $1 AND g.user_id = $2 RETURNING ${GROUP_COLUMNS}`, [
    o.id,
    o.userId,
    o.name,
    new Date(),
  ]);
  return rows[0] ?? null;
}

export async function deleteGroup(sql: SqlPool, o: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM groups WHERE id = $1 AND user_id = $2', [o.id, o.userId]);
  return rowCount === 1;
}

/** Of `contactIds`, those that are not the user's contacts. */
export async function foreignContactIds(sql: SqlPool, o: { userId: string; contactIds: string[] }): Promise<string[]> {
  if (o.contactIds.length === 0) return [];
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM contacts WHERE user_id = $1 AND id = ANY($2::uuid[])', [o.userId, o.contactIds]);
  const ownIds = new Set(rows.map((c) => c.id));
  return o.contactIds.filter((id) => !ownIds.has(id));
}

/**
 * Adds members by contact id and by phone, in one transaction; a phone with no contact yet becomes
 * a contact with an empty name. Members already in the group stay as they were. Returns how many
 * were added.
 */
export async function addGroupMembers(sql: SqlPool, o: { userId: string; groupId: string; contactIds: string[]; phones: string[] }): Promise<number> {
  const now = new Date();
  return inTransaction(sql, async (tx) => {
    let phoneContactIds: string[] = [];
    if (o.phones.length > 0) {
      const ids = o.phones.map(() => newId());
      await tx.query(
        `INSERT INTO contacts (id, user_id, name, phone, created_at, updated_at)
         SELECT t.id, $1::uuid, '', t.phone, $2, $2 FROM unnest($3::uuid[], $4::text[]) AS t(id, phone)
         ON CONFLICT (user_id, phone) DO NOTHING`,
        [o.userId, now, ids, o.phones],
      );
      const { rows } = await tx.query<{ id: string }>('SELECT id FROM contacts WHERE user_id = $1::uuid AND phone = ANY($2::text[])', [o.userId, o.phones]);
      phoneContactIds = rows.map((r) => r.id);
    }
    const all = [...new Set([...o.contactIds, ...phoneContactIds])];
    if (all.length === 0) return 0;
    const { rowCount } = await tx.query(
      `INSERT INTO group_members (group_id, contact_id, added_at)
       SELECT $1::uuid, c, $2 FROM unnest($3::uuid[]) AS c
       ON CONFLICT (group_id, contact_id) DO NOTHING`,
      [o.groupId, now, all],
    );
    return rowCount ?? 0;
  });
}

export async function removeGroupMember(sql: SqlPool, o: { groupId: string; contactId: string }): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM group_members WHERE group_id = $1 AND contact_id = $2', [o.groupId, o.contactId]);
  return rowCount === 1;
}

export async function listGroupMembers(sql: SqlPool, o: { groupId: string; limit: number; offset: number }): Promise<{ rows: ContactRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = $1 ORDER BY m.added_at, m.contact_id LIMIT $2 OFFSET $3`,
      [o.groupId, o.limit, o.offset],
    ),
    sql.query<{ n: number }>('SELECT count(*)::int AS n FROM group_members WHERE group_id = $1', [o.groupId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

/** Of `groupIds`, those that are not the user's groups. */
export async function foreignGroupIds(sql: Sql, o: { userId: string; groupIds: string[] }): Promise<string[]> {
  if (o.groupIds.length === 0) return [];
  const { rows } = await sql.query<{ id: string }>('SELECT id FROM groups WHERE user_id = $1 AND id = ANY($2::uuid[])', [o.userId, o.groupIds]);
  const ownIds = new Set(rows.map((g) => g.id));
  return o.groupIds.filter((id) => !ownIds.has(id));
}

/** The phones of every member of the groups, in one query: group order, then the order they joined. */
export async function groupMemberPhones(sql: Sql, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const { rows } = await sql.query<{ phone: string }>(
    `SELECT c.phone FROM group_members gm JOIN contacts c ON c.id = gm.contact_id
     WHERE gm.group_id = ANY($1::uuid[])
     ORDER BY array_position($1::uuid[], gm.group_id), gm.added_at, gm.contact_id`,
    [groupIds],
  );
  return rows.map((r) => r.phone);
}
