import type { HealthReport } from '@smsgw/core';

/**
 * The SMS Gate app's `system:ping` payload (device-apps-research.md, "Other payloads"):
 * `{"health": {"status", "checks": {"battery:level": {status, observedValue, …}, …}}}`. Only the
 * checks smsgw uses are read, each on its own: a missing or odd one leaves that field unreported.
 */
export function healthFromPing(payload: unknown): Partial<HealthReport> {
  const checks = record(record(payload)?.health)?.checks;
  const check = (name: string) => record(record(checks)?.[name]);
  const report: Partial<HealthReport> = {};
  const level = check('battery:level')?.observedValue;
  if (typeof level === 'number' && Number.isFinite(level)) report.batteryLevel = Math.min(100, Math.max(0, Math.round(level)));
  const charging = check('battery:charging')?.observedValue;
  if (typeof charging === 'boolean') report.batteryCharging = charging;
  else if (typeof charging === 'number') report.batteryCharging = charging > 0;
  // `connection:cellular` is the mobile *data* network type (0 none … 5 5G), `pass` on a phone on
  // Wi-Fi with mobile data off, which still sends SMS: only the app's own `fail` counts as no service.
  // The app reports neither the signal strength nor the SMS registration.
  if (check('connection:cellular')?.status === 'fail') report.network = 'none';
  return report;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}
