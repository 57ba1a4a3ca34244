import { api, ok } from '../api/client.ts';
import { Notice, h, useLoad } from '../ui.ts';

/** Your credentials for SMS Gate's client API (docs/compatibility.md): its address, the username and the webhook signing key. */
export function SmsGateCredentials() {
  const account = useLoad(async () => ok(await api.GET('/api/v1/sms-gate')));
  const a = account.data;
  return h(
    'section',
    { 'aria-label': 'SMS Gate credentials' },
    h('h2', null, 'SMS Gate credentials'),
    h('p', null, "SMS Gate's libraries and integrations work against smsgw with these; the password (or Bearer token) is any of your API keys above."),
    account.error && h(Notice, { kind: 'error' }, account.error),
    a &&
      h(
        'dl',
        null,
        h('dt', null, 'Address'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'sms-gate-url' }, a.url)),
        h('dt', null, 'Username'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'sms-gate-username' }, a.username)),
        h('dt', null, 'Webhook signing key'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'sms-gate-signing-key' }, a.webhook_signing_key)),
      ),
  );
}
