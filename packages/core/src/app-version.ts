/**
 * SMS Gate app versions (`me.capcom.smsgateway/<version>`, real-devices.md §2b.7): features a
 * version has, such as remote cancel (v1.67, §2b.11).
 */

/** The first app version that cancels a message it holds when asked (`MessageCancelled`). */
export const REMOTE_CANCEL_VERSION = '1.67';
/** The first app version with the `system:ping` webhook (its ping module). */
export const PING_WEBHOOK_VERSION = '1.16';

/** Whether `version` (e.g. `1.68.0`, `1.67.1-insecure`) is `minimum` or later; false for an unknown or unreadable one. */
export function appVersionAtLeast(version: string | null | undefined, minimum: string): boolean {
  const parts = (value: string) => /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(value)?.slice(1).map((n) => Number(n ?? 0));
  const have = version ? parts(version) : undefined;
  const want = parts(minimum)!;
  if (!have) return false;
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i]! > want[i]!;
  return true;
}
