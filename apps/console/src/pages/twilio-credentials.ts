import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { Button, Notice, h, message, useAction, useLoad } from '../ui.ts';

/** Your credentials for Twilio's Messages API (docs/compatibility.md), and replacing the Auth Token. */
export function TwilioCredentials() {
  const account = useLoad(async () => ok(await api.GET('/api/v1/twilio')));
  const [confirming, setConfirming] = useState(false);
  const action = useAction();
  const rotate = () =>
    action
      .run(async () => ok(await api.POST('/api/v1/twilio/auth-token')))
      .then(() => {
        setConfirming(false);
        account.reload();
      });
  const a = account.data;
  return h(
    'section',
    { 'aria-label': 'Twilio credentials' },
    h('h2', null, 'Twilio credentials'),
    h('p', null, "Twilio's libraries work against smsgw at ", h('code', null, '<this address>/2010-04-01'), ' with these.'),
    account.error && h(Notice, { kind: 'error' }, account.error),
    action.problem && h(Notice, { kind: 'error' }, message(action.problem)),
    a &&
      h(
        'dl',
        null,
        h('dt', null, 'Account SID'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'twilio-account-sid' }, a.account_sid)),
        h('dt', null, 'Messaging Service SID'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'twilio-service-sid' }, a.messaging_service_sid)),
        h('dt', null, 'Auth Token'),
        h('dd', null, h('code', { class: 'wrap', 'data-testid': 'twilio-auth-token' }, a.auth_token)),
      ),
    a &&
      (confirming
        ? h(Button, { kind: 'danger', disabled: action.busy, onClick: rotate }, 'Confirm: replace the Auth Token')
        : h(Button, { kind: 'plain', onClick: () => setConfirming(true) }, 'Replace the Auth Token')),
  );
}
