import { appVersionAtLeast } from './app-version.ts';

/**
 * The device protocols smsgw speaks (docs/devices.md), one row each: the facts the rest of the code
 * reads instead of testing a protocol's name. A protocol's wire adapter is its folder,
 * apps/api/src/routes/device-protocols/<slug>/, registered from that folder's index.ts; adding a
 * protocol is a row here, an adapter there (a missing one does not compile) and its enum value in
 * prisma/schema.prisma (`device_protocol`).
 */
export interface DeviceProtocolFacts {
  /** Its folder (routes/device-protocols/<slug>) and the device simulator's `SIM_PROTOCOL`. */
  slug: string;
  /** What its devices are, in the device record's schema (after the stored name). */
  description: string;
  /** What its devices are called in the console. */
  label: string;
  /**
   * Cancelling a message the device already holds (decisions.md, "Cancel"): the device's app and
   * the first version of it that cancels when asked; null: the device never gives a message back.
   */
  remoteCancel: { app: string; fromVersion: string } | null;
  /** Whether it sends end-to-end encrypted messages (decrypted on the device). */
  encryptedMessages: boolean;
  /** Whether its devices pace themselves by their rate limits, read from settings they fetch again when told they changed. */
  pacesFromSettings: boolean;
}

export const DEVICE_PROTOCOLS = {
  native: {
    slug: 'native',
    description: 'the device protocol (modem agent, simulator)',
    label: 'Native (modem agent or simulator)',
    remoteCancel: null,
    encryptedMessages: false,
    pacesFromSettings: false,
  },
  sms_gate: {
    slug: 'sms-gate',
    description: 'a phone running the SMS Gate app',
    label: 'Phone (SMS Gate)',
    // `MessageCancelled` (real-devices.md §2b.11).
    remoteCancel: { app: 'SMS Gate app', fromVersion: '1.67' },
    encryptedMessages: true,
    pacesFromSettings: true,
  },
} as const satisfies Record<string, DeviceProtocolFacts>;

/** A device protocol's stored name (Postgres enum `device_protocol`, the device record's `protocol`). */
export type DeviceProtocol = keyof typeof DEVICE_PROTOCOLS;
/** A device protocol's slug (its folder, `SIM_PROTOCOL`). */
export type DeviceProtocolSlug = (typeof DEVICE_PROTOCOLS)[DeviceProtocol]['slug'];

export const DEVICE_PROTOCOL_NAMES = Object.keys(DEVICE_PROTOCOLS) as DeviceProtocol[];
export const DEVICE_PROTOCOL_SLUGS = DEVICE_PROTOCOL_NAMES.map((name) => DEVICE_PROTOCOLS[name].slug);

/** The protocol of a slug. */
export function protocolOfSlug(slug: DeviceProtocolSlug): DeviceProtocol {
  return DEVICE_PROTOCOL_NAMES.find((name) => DEVICE_PROTOCOLS[name].slug === slug)!;
}

type Capability = { [K in keyof DeviceProtocolFacts]: DeviceProtocolFacts[K] extends boolean ? K : never }[keyof DeviceProtocolFacts];

/** The protocols that have a capability, e.g. those that may send an encrypted message. */
export function protocolsWith(capability: Capability): DeviceProtocol[] {
  return DEVICE_PROTOCOL_NAMES.filter((name) => DEVICE_PROTOCOLS[name][capability]);
}

/** Whether a device cancels a message it holds when asked: its protocol can, and its app is recent enough. */
export function cancelsHeldMessages(device: { protocol: DeviceProtocol; appVersion: string | null }): boolean {
  const remote: DeviceProtocolFacts['remoteCancel'] = DEVICE_PROTOCOLS[device.protocol].remoteCancel;
  return remote !== null && appVersionAtLeast(device.appVersion, remote.fromVersion);
}
