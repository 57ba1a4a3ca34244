import { isUuid } from '@smsgw/core';
import { findDevice, findUserByIdOrName, type Db, type DeviceRow, type UserDetailRow } from '@smsgw/db';
import { CliError, notFound, usageError } from './errors.ts';

/** The `--name value` options of a command line. */
export type Flags = Record<string, string | undefined>;

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw usageError(`--${name} is required`);
  return value;
}

/** A whole number from `min` to `max` (the bounds of the matching API field). */
export function wholeNumber(value: string, name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(number >= min && number <= max)) {
    throw usageError(max === Number.MAX_SAFE_INTEGER ? `--${name} must be a whole number >= ${min}` : `--${name} must be a whole number from ${min} to ${max}`);
  }
  return number;
}

/** `--limit` 1..100 (default 20) and `--offset` (default 0), as the `limit` and `offset` of the API's lists. */
export function paging(flags: Flags): { limit: number; offset: number } {
  return {
    limit: flags.limit === undefined ? 20 : wholeNumber(flags.limit, 'limit', 1, 100),
    offset: flags.offset === undefined ? 0 : wholeNumber(flags.offset, 'offset', 0, 2_147_483_647),
  };
}

/** The user of `--user`, an id or a name. */
export async function existingUser(db: Db, flags: Flags): Promise<UserDetailRow> {
  const ref = required(flags, 'user');
  const user = await findUserByIdOrName(db, ref);
  if (!user) throw notFound(`no user with id or name ${ref}`);
  return user;
}

/** The user of `--user`, refused when disabled: the API takes no requests of a disabled user. */
export async function enabledUser(db: Db, flags: Flags): Promise<UserDetailRow> {
  const user = await existingUser(db, flags);
  if (user.disabledAt) throw new CliError('conflict', 'user_disabled', `User ${user.name} is disabled; enable it first (smsgw user enable).`);
  return user;
}

/** The device of `--device` of the user of `--user` (deleted devices are gone). */
export async function existingDevice(db: Db, flags: Flags): Promise<DeviceRow> {
  const user = await existingUser(db, flags);
  const id = required(flags, 'device');
  const device = isUuid(id) ? await findDevice(db, { userId: user.id, id }) : null;
  if (!device) throw notFound(`no device with id ${id} for user ${flags.user}`);
  return device;
}
