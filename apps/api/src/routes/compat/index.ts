import type { FastifyPluginAsync } from 'fastify';
import type { ErrorDialect } from '../../plugins/errors.ts';
import kannelRoutes, { KANNEL_PREFIX, kannelErrorBody } from './kannel/index.ts';
import smsGateClientRoutes, { SMS_GATE_PREFIX, smsGateErrorBody } from './sms-gate/index.ts';
import twilioRoutes, { TWILIO_PREFIX, twilioErrorBody } from './twilio/index.ts';

/**
 * The client APIs of other gateways that smsgw speaks (docs/compatibility.md): one row each, its
 * path prefix, its routes (thin adapters over the one send path, record and cancel) and its error
 * body. Nothing outside this folder names one of them.
 */
export const COMPAT_APIS: (ErrorDialect & { routes: FastifyPluginAsync })[] = [
  { prefix: SMS_GATE_PREFIX, routes: smsGateClientRoutes, body: smsGateErrorBody },
  { prefix: KANNEL_PREFIX, routes: kannelRoutes, body: kannelErrorBody },
  { prefix: TWILIO_PREFIX, routes: twilioRoutes, body: twilioErrorBody },
];
