import { newId } from '@smsgw/core';
import { assignments, isUniqueViolation, Params, type SqlPool } from './sql.ts';

export interface ContactRow {
  id: string;
  name: string;
  phone: string;
  createdAt: Date;
  updatedAt: Date;
}

/** The columns of a ContactRow, of the table aliased `c`. */
export const CONTACT_COLUMNS = 'c.id, c.name, c.phone, c.created_at AS "createdAt", c.updated_at AS "updatedAt"';

/** The phone is taken: a contact with this number exists for the user. */
export class DuplicatePhoneError extends Error {
  override name = 'DuplicatePhoneError';
}

export async function createContact(sql: SqlPool, o: { userId: string; name: string; phone: string }): Promise<ContactRow> {
  try {
    const { rows } = await sql.query<ContactRow>(
      `INSERT INTO contacts AS c (id, user_id, name, phone, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${CONTACT_COLUMNS}`,
      [newId(), o.userId, o.name, o.phone, new Date()],
    );
    return rows[0]!;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicatePhoneError(o.phone);
    throw error;
  }
}

export async function findContact(sql: SqlPool, o: { userId: string; id: string }): Promise<ContactRow | null> {
  const { rows } = await sql.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.id = $1 AND c.user_id = $2`, [o.id, o.userId]);
  return rows[0] ?? null;
}

export async function listContacts(
  sql: SqlPool,
  o: { userId: string; phone?: string; name?: string; limit: number; offset: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const where = `c.user_id = $1 AND ($2::text IS NULL OR c.phone = $2) AND ($3::text IS NULL OR c.name ILIKE '%' || $3 || '%')`;
  const filter = [o.userId, o.phone ?? null, o.name === undefined ? null : likeLiteral(o.name)];
  const [{ rows }, count] = await Promise.all([
    sql.query<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE ${where} ORDER BY c.created_at DESC, c.id DESC LIMIT $4 OFFSET $5`, [
      ...filter,
      o.limit,
      o.offset,
    ]),
    sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM contacts c WHERE ${where}`, filter),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function updateContact(sql: SqlPool, o: { userId: string; id: string; name?: string; phone?: string }): Promise<ContactRow | null> {
  const p = new Params();
  const set = assignments(p, { name: o.name, phone: o.phone, updated_at: new Date() });
  try {
    const { rows } = await sql.query<ContactRow>(
      `UPDATE contacts c SET ${set} WHERE c.id = ${p.add(o.id)} AND c.user_id = ${p.add(o.userId)} RETURNING ${CONTACT_COLUMNS}`,
      p.values,
    );
    return rows[0] ?? null;
  } catch (error) {
    if (isUniqueViolation(error)) throw new DuplicatePhoneError(o.phone ?? '');
    throw error;
  }
}

/** Deletes a contact; its group memberships go with it. */
export async function deleteContact(sql: SqlPool, o: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM contacts WHERE id = $1 AND user_id = $2', [o.id, o.userId]);
  return rowCount === 1;
}

/**
 * Inserts or renames many contacts in one statement (a contact with the same phone takes the new
 * name); returns how many were created and how many updated.
 */
export async function importContacts(
  sql: SqlPool,
  o: { userId: string; contacts: { name: string; phone: string }[] },
): Promise<{ created: number; updated: number }> {
  if (o.contacts.length === 0) return { created: 0, updated: 0 };
  const { rows } = await sql.query<{ inserted: boolean }>(
    `INSERT INTO contacts (id, user_id, name, phone, created_at, updated_at)
     SELECT t.id, $1::uuid, t.name, t.phone, $2, $2
     FROM unnest($3::uuid[], $4::text[], $5::text[]) AS t(id, name, phone)
     ON CONFLICT (user_id, phone) DO UPDATE SET name = EXCLUDED.name, updated_at = EXCLUDED.updated_at
     RETURNING (xmax = 0) AS inserted`,
    [o.userId, new Date(), o.contacts.map(() => newId()), o.contacts.map((c) => c.name), o.contacts.map((c) => c.phone)],
  );
  const created = rows.filter((r) => r.inserted).length;
  return { created, updated: rows.length - created };
}

/** Names of the user's contacts with these phones, in one query (template sends). */
export async function contactNamesByPhone(sql: SqlPool, o: { userId: string; phones: string[] }): Promise<Map<string, string>> {
  if (o.phones.length === 0) return new Map();
  const { rows } = await sql.query<{ phone: string; name: string }>('SELECT phone, name FROM contacts WHERE user_id = $1::uuid AND phone = ANY($2::text[])', [
    o.userId,
    o.phones,
  ]);
  return new Map(rows.map((r) => [r.phone, r.name]));
}

/** An ILIKE pattern's literal text: `%`, `_` and `\` in the user's text must match themselves. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
