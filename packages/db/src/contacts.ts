import { newId } from '@smsgw/core';
import { Prisma } from './generated/prisma/client.ts';
import type { Db } from './client.ts';

export interface ContactRow {
  id: string;
  name: string;
  phone: string;
  createdAt: Date;
  updatedAt: Date;
}

const contactColumns = { id: true, name: true, phone: true, createdAt: true, updatedAt: true } as const;

/** The phone is taken: a contact with this number exists for the user. */
export class DuplicatePhoneError extends Error {
  override name = 'DuplicatePhoneError';
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}

export async function createContact(db: Db, o: { userId: string; name: string; phone: string }): Promise<ContactRow> {
  const now = new Date();
  try {
    return await db.contact.create({
      data: { id: newId(), userId: o.userId, name: o.name, phone: o.phone, createdAt: now, updatedAt: now },
      select: contactColumns,
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicatePhoneError(o.phone);
    throw error;
  }
}

export async function findContact(db: Db, o: { userId: string; id: string }): Promise<ContactRow | null> {
  return db.contact.findFirst({ where: { id: o.id, userId: o.userId }, select: contactColumns });
}

export async function listContacts(
  db: Db,
  o: { userId: string; phone?: string; name?: string; limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const where = {
    userId: o.userId,
    ...(o.phone !== undefined && { phone: o.phone }),
    ...(o.name !== undefined && { name: { contains: likeLiteral(o.name), mode: 'insensitive' as const } }),
  };
  const [rows, total] = await Promise.all([
    db.contact.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: contactColumns }),
    db.contact.count({ where }),
  ]);
  return { rows, total };
}

export async function updateContact(
  db: Db,
  o: { userId: string; id: string; name?: string; phone?: string },
): Promise<ContactRow | null> {
  try {
    const { count } = await db.contact.updateMany({
      where: { id: o.id, userId: o.userId },
      data: { name: o.name, phone: o.phone, updatedAt: new Date() },
    });
    return count === 1 ? findContact(db, o) : null;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicatePhoneError(o.phone ?? '');
    throw error;
  }
}

/** Deletes a contact; its group memberships go with it. */
export async function deleteContact(db: Db, o: { userId: string; id: string }): Promise<boolean> {
  const { count } = await db.contact.deleteMany({ where: { id: o.id, userId: o.userId } });
  return count === 1;
}

/**
 * Inserts or renames many contacts in one statement (a contact with the same phone takes the new
 * name); returns how many were created and how many updated.
 */
export async function importContacts(
  db: Db,
  o: { userId: string; contacts: { name: string; phone: string }[] },
): Promise<{ created: number; updated: number }> {
  if (o.contacts.length === 0) return { created: 0, updated: 0 };
  const now = new Date();
  const ids = o.contacts.map(() => newId());
  const rows = await db.$queryRaw<{ inserted: boolean }[]>`
    INSERT INTO contacts (id, user_id, name, phone, created_at, updated_at)
    SELECT t.id, ${o.userId}::uuid, t.name, t.phone, ${now}, ${now}
    FROM unnest(${ids}::uuid[], ${o.contacts.map((c) => c.name)}::text[], ${o.contacts.map((c) => c.phone)}::text[]) AS t(id, name, phone)
    ON CONFLICT (user_id, phone) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at
    RETURNING (xmax = 0) AS inserted`;
  const created = rows.filter((r) => r.inserted).length;
  return { created, updated: rows.length - created };
}

/** Names of the user's contacts with these phones, in one query (template sends). */
export async function contactNamesByPhone(db: Db, o: { userId: string; phones: string[] }): Promise<Map<string, string>> {
  if (o.phones.length === 0) return new Map();
  const rows = await db.$queryRaw<{ phone: string; name: string }[]>`
    SELECT phone, name FROM contacts WHERE user_id = ${o.userId}::uuid AND phone = ANY(${o.phones}::text[])`;
  return new Map(rows.map((r) => [r.phone, r.name]));
}

/** Prisma's `contains` is an (I)LIKE pattern: `%`, `_` and `\` in the user's text must match themselves. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
