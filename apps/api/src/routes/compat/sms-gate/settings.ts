import type { FastifyInstance } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { checkSettings, keptSettings, mergeSettings, snakeSettings, withoutNulls, type SmsGateSettings } from '@smsgw/core';
import { smsGatePhoneIds, smsGateSettings, updateSmsGateSettings } from '@smsgw/db';
import { publishSettingsUpdated } from '@smsgw/queue';
import { SmsGateSettingsBody, smsGateErrors } from './schemas.ts';

const tags = ['sms-gate-client'];

/**
 * `/settings`: the account's SMS Gate settings (upstream's `handlers/settings/3rdparty.go`). PUT
 * replaces them, PATCH merges field by field; either way the user's SMS Gate phones are told
 * (`SettingsUpdated`) and fetch what applies to them (`phoneSettings`). The signing key of the SMS
 * Gate-format webhooks is always there: a change that leaves it out keeps the current one.
 */
const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const route = { prefixTrailingSlash: 'no-slash' as const };
  // client-ts spells the fields in camelCase: read as upstream's snake_case before the schema checks them.
  const preValidation = async (request: { body: unknown }) => {
    request.body = snakeSettings(request.body);
  };
  const answer = { 200: SmsGateSettingsBody, ...smsGateErrors(400, 401, 403, 429) };

  app.get(
    '/',
    {
      ...route,
      schema: {
        tags,
        summary: "The account's SMS Gate settings, with the webhooks' signing key",
        response: { 200: SmsGateSettingsBody, ...smsGateErrors(401, 403, 429) },
      },
    },
    async (request) => smsGateSettings(app.sql, request.auth.user.id),
  );

  app.put(
    '/',
    {
      ...route,
      preValidation,
      schema: { tags, summary: 'Replace the settings (the signing key stays unless given); phones are told', body: SmsGateSettingsBody, response: answer },
    },
    async (request) => {
      const replacement = withoutNulls(keptSettings(request.body));
      return change(app, request.auth.user.id, () => replacement);
    },
  );

  app.patch(
    '/',
    {
      ...route,
      preValidation,
      schema: { tags, summary: 'Change some settings (a null field is cleared); phones are told', body: SmsGateSettingsBody, response: answer },
    },
    async (request) => {
      const patch = keptSettings(request.body);
      return change(app, request.auth.user.id, (current) => mergeSettings(current, patch));
    },
  );
};
export default settingsRoutes;

/**
 * Stores `next(current)` with the signing key kept when it names none, refusing settings the
 * phones would misread (nothing changes then), and tells the user's SMS Gate phones. A failed
 * publish leaves them to their daily fetch.
 */
async function change(app: FastifyInstance, userId: string, next: (current: SmsGateSettings) => SmsGateSettings): Promise<SmsGateSettings> {
  const stored = await updateSmsGateSettings(app.sql, userId, (current) => {
    const settings = next(current);
    const signingKey = settings.webhooks?.signing_key ?? current.webhooks?.signing_key;
    const kept = { ...settings, webhooks: { ...settings.webhooks, signing_key: signingKey } };
    checkSettings(kept);
    return kept;
  });
  const phones = await smsGatePhoneIds(app.sql, userId);
  await publishSettingsUpdated(app.redis, app.config.QUEUE_PREFIX, phones).catch((error: unknown) =>
    app.incidents.report('telling phones their settings changed failed', error),
  );
  return stored;
}
