import { v7 } from 'uuid';

/** New identifiers are UUIDv7: time-ordered, so inserts stay at the right edge of the indexes. */
export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
