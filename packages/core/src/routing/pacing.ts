import { fitAndSpill, type SpillInput, type SpillResult } from './fit-and-spill.ts';
import type { PaceLedger } from './pace-ledger.ts';

/**
 * Pacing (docs/devices.md, "Pacing"): every device stays under its rate limits; a paced device is
 * handed what fits its windows now, the rest spills or waits (`fitAndSpill`).
 */
export function pace(ledger: PaceLedger, input: SpillInput): SpillResult {
  return fitAndSpill(
    {
      limits: (deviceId) => ledger.limits(deviceId),
      fit: (deviceId, ids) => {
        const { taken, left, retryInMs } = ledger.take(deviceId, ids);
        return { kept: taken.map((id) => ({ id, deviceId })), left, retryInMs };
      },
    },
    input,
  );
}
