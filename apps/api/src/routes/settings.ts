import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AppError } from '@smsgw/core';
import { findUserSettings, updateUserSettings, type UserSettings } from '@smsgw/db';
import { authErrors } from '../schemas/common.ts';
import { errors } from '../schemas/errors.ts';

const OptOutKeywords = Type.Boolean({ description: 'Incoming STOP/START keywords (whole text, any case) keep the opt-out list. Default true.' });
const StickySender = Type.Boolean({
  description:
    'A recipient gets later messages from the device (and SIM) that last sent to it or received from it, while that device is available. Default false.',
});

const Settings = Type.Object(
  { opt_out_keywords: OptOutKeywords, sticky_sender: StickySender },
  { $id: 'Settings', description: "The caller's settings.", examples: [{ opt_out_keywords: true, sticky_sender: false }] },
);

function toSettingsRecord(s: UserSettings) {
  return { opt_out_keywords: s.optOutKeywords, sticky_sender: s.stickySender };
}

/** `/api/v1/settings`: the caller's own settings (opt-out keywords, sticky sender). */
const settingsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRequest', app.authenticate);

  const found = (settings: UserSettings | null) => {
    // The authenticated user was deleted in between: as for any unknown credential.
    if (!settings) throw new AppError('unauthorized');
    return toSettingsRecord(settings);
  };

  app.get('/api/v1/settings', { schema: { tags: ['settings'], summary: 'Get your settings', response: { 200: Settings, ...authErrors } } }, async (request) =>
    found(await findUserSettings(app.sql, request.auth.user.id)),
  );

  app.patch(
    '/api/v1/settings',
    {
      schema: {
        tags: ['settings'],
        summary: 'Change your settings (the fields given; the others stay)',
        body: Type.Object(
          { opt_out_keywords: Type.Optional(OptOutKeywords), sticky_sender: Type.Optional(StickySender) },
          { additionalProperties: false, minProperties: 1, examples: [{ sticky_sender: true }] },
        ),
        response: { 200: Settings, ...errors('invalid_request'), ...authErrors },
      },
    },
    async (request) => {
      const { opt_out_keywords, sticky_sender } = request.body;
      const changes = {
        ...(opt_out_keywords !== undefined && { optOutKeywords: opt_out_keywords }),
        ...(sticky_sender !== undefined && { stickySender: sticky_sender }),
      };
      return found(await updateUserSettings(app.sql, request.auth.user.id, changes));
    },
  );
};
export default settingsRoutes;
