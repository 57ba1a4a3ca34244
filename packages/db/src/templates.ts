import { newId } from '@smsgw/core';
import { assignments, Params, type SqlPool } from './sql.ts';

export interface TemplateRow {
  id: string;
  userId: string;
  name: string;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

const COLUMNS = 'id, user_id AS "userId", name, body, created_at AS "createdAt", updated_at AS "updatedAt"';

export async function createTemplate(sql: SqlPool, o: { userId: string; name: string; body: string }): Promise<TemplateRow> {
  const { rows } = await sql.query<TemplateRow>(
    `INSERT INTO templates (id, user_id, name, body, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING ${COLUMNS}`,
    [newId(), o.userId, o.name, o.body, new Date()],
  );
  return rows[0]!;
}

/** A template by id whoever owns it (send-template tells "not found" from "not yours"). */
export async function findTemplateById(sql: SqlPool, id: string): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(`SELECT ${COLUMNS} FROM templates WHERE id = $1`, [id]);
  return rows[0] ?? null;
}

export async function findTemplate(sql: SqlPool, o: { userId: string; id: string }): Promise<TemplateRow | null> {
  const { rows } = await sql.query<TemplateRow>(`SELECT ${COLUMNS} FROM templates WHERE id = $1 AND user_id = $2`, [o.id, o.userId]);
  return rows[0] ?? null;
}

export async function listTemplates(sql: SqlPool, o: { userId: string; limit: number; offset: number }): Promise<{ rows: TemplateRow[]; total: number }> {
  const [{ rows }, count] = await Promise.all([
    sql.query<TemplateRow>(`SELECT ${COLUMNS} FROM templates WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, [
      o.userId,
      o.limit,
      o.offset,
    ]),
    sql.query<{ n: number }>('SELECT count(*)::int AS n FROM templates WHERE user_id = $1', [o.userId]),
  ]);
  return { rows, total: count.rows[0]!.n };
}

export async function updateTemplate(sql: SqlPool, o: { userId: string; id: string; name?: string; body?: string }): Promise<TemplateRow | null> {
  const p = new Params();
  const set = assignments(p, { name: o.name, body: o.body, updated_at: new Date() });
  const { rows } = await sql.query<TemplateRow>(
    `UPDATE templates SET ${set} WHERE id = ${p.add(o.id)} AND user_id = ${p.add(o.userId)} RETURNING ${COLUMNS}`,
    p.values,
  );
  return rows[0] ?? null;
}

export async function deleteTemplate(sql: SqlPool, o: { userId: string; id: string }): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM templates WHERE id = $1 AND user_id = $2', [o.id, o.userId]);
  return rowCount === 1;
}
