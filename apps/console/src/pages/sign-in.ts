import { useState } from 'preact/hooks';
import { signIn } from '../api/client.ts';
import { Button, Field, Notice, h, message } from '../ui.ts';

/** Sign in with an API key, exchanged at once for a short-lived JWT kept for this tab only. */
export function SignIn(props: { expired: boolean; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(key.trim());
      props.onSignedIn();
    } catch (problem) {
      setError(message(problem));
    } finally {
      setBusy(false);
    }
  };
  return h(
    'main',
    { class: 'sign-in', id: 'main' },
    h(
      'form',
      { onSubmit: submit, 'aria-labelledby': 'sign-in-title' },
      h('h1', { id: 'sign-in-title' }, 'smsgw console'),
      h('p', null, 'Sign in with an API key. The console keeps a short-lived token for this tab only.'),
      props.expired && h(Notice, { kind: 'error' }, 'Your session ended (it expired, or its API key was revoked): sign in again.'),
      h(Field, {
        label: 'API key',
        name: 'api_key',
        type: 'password',
        autocomplete: 'off',
        required: true,
        value: key,
        error,
        placeholder: 'smsgw_sk_…',
        onInput: (e: Event) => setKey((e.target as HTMLInputElement).value),
      }),
      h(Button, { type: 'submit', kind: 'primary', disabled: busy }, busy ? 'Signing in…' : 'Sign in'),
    ),
  );
}
