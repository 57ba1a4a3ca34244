import { newId } from '@smsgw/core';
import type { Db } from './client.ts';

export interface TemplateRow {
  id: string;
  userId: string;
  name: string;
  body: string;
  createdAt: Date;
  updatedAt: Date;
}

const templateColumns = { id: true, userId: true, name: true, body: true, createdAt: true, updatedAt: true } as const;

export async function createTemplate(db: Db, o: { userId: string; name: string; body: string }): Promise<TemplateRow> {
  const now = new Date();
  return db.template.create({ data: { id: newId(), userId: o.userId, name: o.name, body: o.body, createdAt: now, updatedAt: now }, select: templateColumns });
}

/** A template by id whoever owns it (send-template tells "not found" from "not yours"). */
export async function findTemplateById(db: Db, id: string): Promise<TemplateRow | null> {
  return db.template.findUnique({ where: { id }, select: templateColumns });
}

export async function findTemplate(db: Db, o: { userId: string; id: string }): Promise<TemplateRow | null> {
  return db.template.findFirst({ where: { id: o.id, userId: o.userId }, select: templateColumns });
}

export async function listTemplates(db: Db, o: { userId: string; limit: number; offset: number }): Promise<{ rows: TemplateRow[]; total: number }> {
  const where = { userId: o.userId };
  const [rows, total] = await Promise.all([
    db.template.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], skip: o.offset, take: o.limit, select: templateColumns }),
    db.template.count({ where }),
  ]);
  return { rows, total };
}

export async function updateTemplate(db: Db, o: { userId: string; id: string; name?: string; body?: string }): Promise<TemplateRow | null> {
  const { count } = await db.template.updateMany({ where: { id: o.id, userId: o.userId }, data: { name: o.name, body: o.body, updatedAt: new Date() } });
  return count === 1 ? findTemplate(db, o) : null;
}

export async function deleteTemplate(db: Db, o: { userId: string; id: string }): Promise<boolean> {
  const { count } = await db.template.deleteMany({ where: { id: o.id, userId: o.userId } });
  return count === 1;
}
