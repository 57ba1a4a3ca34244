import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '@smsgw/core';
import { smsGateErrors } from './schemas.ts';

/** Upstream's words: its server never serves the phones' logs, nor does smsgw (it does not have them). */
export const LOGS_REFUSAL = "For privacy reasons, device's logs are not accessible through Cloud server";

/** `GET /logs`: 501 with upstream's message, as upstream always answers. */
const logsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      schema: { tags: ['sms-gate-client'], summary: 'Not served (501), as upstream', response: smsGateErrors(401, 403, 429, 501) },
    },
    async () => {
      throw new AppError('not_implemented', LOGS_REFUSAL);
    },
  );
};
export default logsRoutes;
