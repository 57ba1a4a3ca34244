import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { Button, Field, Notice, Page, Table, h, message, useAction, useLoad, when } from '../ui.ts';
import { SmsGateCredentials } from './sms-gate-credentials.ts';
import { TwilioCredentials } from './twilio-credentials.ts';

/** API keys: create (the key is shown once), revoke. */
export function ApiKeys() {
  const list = useLoad(async () => ok(await api.GET('/api/v1/api-keys')));
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    await action.run(async () => {
      const key = ok(await api.POST('/api/v1/api-keys', { body: { name: name.trim() } }));
      setCreated({ name: key.name, key: key.key });
      setName('');
      list.reload();
    });
  };
  const revoke = (id: string) =>
    action
      .run(async () => ok(await api.DELETE('/api/v1/api-keys/{id}', { params: { path: { id } } })))
      .then(() => {
        setConfirming(null);
        list.reload();
      });
  return h(
    Page,
    { title: 'API keys' },
    h(
      'form',
      { class: 'form inline', onSubmit: create, 'aria-label': 'Create an API key' },
      h(Field, { label: 'Key name', name: 'name', required: true, value: name, onInput: (e: Event) => setName((e.target as HTMLInputElement).value) }),
      h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, 'Create key'),
    ),
    created && h(Notice, { kind: 'ok' }, `Key ${created.name}, shown only now: `, h('code', { class: 'wrap', 'data-testid': 'new-key' }, created.key)),
    action.problem && h(Notice, { kind: 'error' }, message(action.problem)),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'API keys',
        head: ['Name', 'Prefix', 'Created', 'Last used', 'State', ''],
        empty: 'No keys.',
        rows: list.data.data.map((k) => [
          k.name,
          h('code', null, k.prefix),
          when(k.created_at),
          when(k.last_used_at),
          k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active',
          k.revoked_at
            ? ''
            : confirming === k.id
              ? h(Button, { kind: 'danger', onClick: () => revoke(k.id) }, `Confirm revoke ${k.name}`)
              : h(Button, { kind: 'danger', onClick: () => setConfirming(k.id) }, `Revoke ${k.name}`),
        ]),
      }),
    h(SmsGateCredentials, null),
    h(TwilioCredentials, null),
  );
}
