import { newId } from '@smsgw/core';
import type { Db } from './client.ts';
import type { ContactRow } from './contacts.ts';

export interface GroupRow {
  id: string;
  name: string;
  createdAt: Date;
  updatedAt: Date;
  memberCount: number;
}

async function withCounts(db: Db, groups: Omit<GroupRow, 'memberCount'>[]): Promise<GroupRow[]> {
  if (groups.length === 0) return [];
  const counts = await db.groupMember.groupBy({ by: ['groupId'], where: { groupId: { in: groups.map((g) => g.id) } }, _count: true });
  const byGroup = new Map(counts.map((c) => [c.groupId, c._count]));
  return groups.map((g) => ({ ...g, memberCount: byGroup.get(g.id) ?? 0 }));
}

const groupColumns = { id: true, name: true, createdAt: true, updatedAt: true } as const;

export async function createGroup(db: Db, o: { userId: string; name: string }): Promise<GroupRow> {
  const now = new Date();
  const group = await db.group.create({ data: { id: newId(), userId: o.userId, name: o.name, createdAt: now, updatedAt: now }, select: groupColumns });
  return { ...group, memberCount: 0 };
}

export async function findGroup(db: Db, o: { userId: string; id: string }): Promise<GroupRow | null> {
  const group = await db.group.findFirst({ where: { id: o.id, userId: o.userId }, select: groupColumns });
  return group ? ((await withCounts(db, [group]))[0] ?? null) : null;
}

export async function listGroups(db: Db, o: { userId: string; limit: number; offset: number }): Promise<{ rows: GroupRow[]; total: number }> {
  const where = { userId: o.userId };
  const [groups, total] = await Promise.all([
    db.group.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: groupColumns }),
    db.group.count({ where }),
  ]);
  return { rows: await withCounts(db, groups), total };
}

export async function renameGroup(db: Db, o: { userId: string; id: string; name: string }): Promise<GroupRow | null> {
  const { count } = await db.group.updateMany({ where: { id: o.id, userId: o.userId }, data: { name: o.name, updatedAt: new Date() } });
  return count === 1 ? findGroup(db, o) : null;
}

export async function deleteGroup(db: Db, o: { userId: string; id: string }): Promise<boolean> {
  const { count } = await db.group.deleteMany({ where: { id: o.id, userId: o.userId } });
  return count === 1;
}

/** Of `contactIds`, those that are not the user's contacts. */
export async function foreignContactIds(db: Db, o: { userId: string; contactIds: string[] }): Promise<string[]> {
  if (o.contactIds.length === 0) return [];
  const own = await db.contact.findMany({ where: { userId: o.userId, id: { in: o.contactIds } }, select: { id: true } });
  const ownIds = new Set(own.map((c) => c.id));
  return o.contactIds.filter((id) => !ownIds.has(id));
}

/**
 * Adds members by contact id and by phone, in one transaction; a phone with no contact yet becomes
 * a contact with an empty name. Members already in the group stay as they were. Returns how many
 * were added.
 */
export async function addGroupMembers(
  db: Db,
  o: { userId: string; groupId: string; contactIds: string[]; phones: string[] },
): Promise<number> {
  const now = new Date();
  return db.$transaction(async (tx) => {
    let phoneContactIds: string[] = [];
    if (o.phones.length > 0) {
      const ids = o.phones.map(() => newId());
      await tx.$executeRaw`
        INSERT INTO contacts (id, user_id, name, phone, created_at, updated_at)
        SELECT t.id, ${o.userId}::uuid, '', t.phone, ${now}, ${now} FROM unnest(${ids}::uuid[], ${o.phones}::text[]) AS t(id, phone)
        ON CONFLICT (user_id, phone) DO NOTHING`;
      const rows = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM contacts WHERE user_id = ${o.userId}::uuid AND phone = ANY(${o.phones}::text[])`;
      phoneContactIds = rows.map((r) => r.id);
    }
    const all = [...new Set([...o.contactIds, ...phoneContactIds])];
    if (all.length === 0) return 0;
    return tx.$executeRaw`
      INSERT INTO group_members (group_id, contact_id, added_at)
      SELECT ${o.groupId}::uuid, c, ${now} FROM unnest(${all}::uuid[]) AS c
      ON CONFLICT (group_id, contact_id) DO NOTHING`;
  });
}

export async function removeGroupMember(db: Db, o: { groupId: string; contactId: string }): Promise<boolean> {
  const { count } = await db.groupMember.deleteMany({ where: { groupId: o.groupId, contactId: o.contactId } });
  return count === 1;
}

export async function listGroupMembers(
  db: Db,
  o: { groupId: string; limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const [members, total] = await Promise.all([
    db.groupMember.findMany({
      where: { groupId: o.groupId },
      orderBy: [{ addedAt: 'asc' }, { contactId: 'asc' }],
      skip: o.offset,
      take: o.limit,
      select: { contact: { select: { id: true, name: true, phone: true, createdAt: true, updatedAt: true } } },
    }),
    db.groupMember.count({ where: { groupId: o.groupId } }),
  ]);
  return { rows: members.map((m) => m.contact), total };
}

/** Of `groupIds`, those that are not the user's groups. */
export async function foreignGroupIds(db: Db, o: { userId: string; groupIds: string[] }): Promise<string[]> {
  if (o.groupIds.length === 0) return [];
  const own = await db.group.findMany({ where: { userId: o.userId, id: { in: o.groupIds } }, select: { id: true } });
  const ownIds = new Set(own.map((g) => g.id));
  return o.groupIds.filter((id) => !ownIds.has(id));
}

/** The phones of every member of the groups, in one query: group order, then the order they joined. */
export async function groupMemberPhones(db: Db, groupIds: string[]): Promise<string[]> {
  if (groupIds.length === 0) return [];
  const rows = await db.$queryRaw<{ phone: string }[]>`
    SELECT c.phone FROM group_members gm JOIN contacts c ON c.id = gm.contact_id
    WHERE gm.group_id = ANY(${groupIds}::uuid[])
    ORDER BY array_position(${groupIds}::uuid[], gm.group_id), gm.added_at, gm.contact_id`;
  return rows.map((r) => r.phone);
}
