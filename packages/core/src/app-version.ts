/**
 * Versions of a device's app (the SMS Gate app's `me.capcom.smsgateway/<version>`, real-devices.md
 * §2b.7): features a version has, such as remote cancel (the protocol's `remoteCancel`, device-protocols.ts).
 */

/** Whether `version` (e.g. `1.68.0`, `1.67.1-insecure`) is `minimum` or later; false for an unknown or unreadable one. */
export function appVersionAtLeast(version: string | null | undefined, minimum: string): boolean {
  const parts = (value: string) =>
    /^(\d+)(?:\.(\d+))?(?:\.(\d+))?/
      .exec(value)
      ?.slice(1)
      .map((n) => Number(n ?? 0));
  const have = version ? parts(version) : undefined;
  const want = parts(minimum)!;
  if (!have) return false;
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i]! > want[i]!;
  return true;
}
