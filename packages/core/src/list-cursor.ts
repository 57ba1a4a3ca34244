/**
 * The `cursor` of a list: where the next page starts, (created_at, id) of the last row shown. It
 * is opaque to clients (base64url), and a cursor that does not decode is the caller's mistake.
 */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function encodeCursor(position: ListPosition): string {
  return Buffer.from(`${position.createdAt.getTime()}.${position.id}`).toString('base64url');
}

/** The position in `cursor`, or null when it is not one that encodeCursor made. */
export function decodeCursor(cursor: string): ListPosition | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  const [millis, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('.');
  if (rest.length > 0 || !millis || !id || !/^\d{1,15}$/.test(millis) || !UUID.test(id)) return null;
  return { createdAt: new Date(Number(millis)), id };
}
