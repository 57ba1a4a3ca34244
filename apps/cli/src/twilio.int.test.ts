import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { call, createTestUser } from '@smsgw/api/testing';
import { cliOnApi, failure, ok } from './testing/run-cli.ts';

const cli = cliOnApi();
const { smsgw } = cli;

describe('smsgw twilio show and rotate', () => {
  it('shows what GET /api/v1/twilio shows; rotate replaces the Auth Token, which the API then serves', async () => {
    const user = await createTestUser(cli.api.db, { devices: 0 });
    const shown = ok(await smsgw('twilio', 'show', '--user', user.user.name));
    const api = (await call(cli.api.app, user.apiKey, 'GET', '/api/v1/twilio')).json();
    expect(shown).toEqual({ user_id: user.userId, ...api });
    expect(shown.account_sid).toBe(`AC${user.userId.replaceAll('-', '')}`);

    const rotated = ok(await smsgw('twilio', 'rotate', '--user', user.userId));
    expect(rotated).toMatchObject({ account_sid: shown.account_sid, messaging_service_sid: shown.messaging_service_sid });
    expect(rotated.auth_token).not.toBe(shown.auth_token);
    expect((await call(cli.api.app, user.apiKey, 'GET', '/api/v1/twilio')).json()).toMatchObject({ auth_token: rotated.auth_token });
  });

  it('exits 3 for an unknown user', async () => {
    const user = randomUUID();
    expect(failure(await smsgw('twilio', 'show', '--user', user))).toEqual({ code: 3, error: 'not_found', message: `no user with id or name ${user}` });
  });
});
