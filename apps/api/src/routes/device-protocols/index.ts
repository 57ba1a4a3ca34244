import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { DeviceProtocol } from '@smsgw/core';
import nativeRoutes from './native/index.ts';
import smsGateRoutes from './sms-gate/index.ts';

/**
 * The device protocols' wire adapters (their facts are packages/core's DEVICE_PROTOCOLS): one folder
 * and route plugin each, a thin adapter over the one device core (services/device-core.ts). Keyed by
 * the table's names, so that a protocol without an adapter does not compile.
 */
export const DEVICE_PROTOCOL_ROUTES: Record<DeviceProtocol, FastifyPluginAsyncTypebox> = {
  native: nativeRoutes,
  sms_gate: smsGateRoutes,
};
