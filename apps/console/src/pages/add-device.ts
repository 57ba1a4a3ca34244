import QRCode from 'qrcode';
import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { Button, Field, Notice, h, message, useAction } from '../ui.ts';

interface Pairing {
  code: string;
  token: string;
  expires_at: string;
  mobile_url: string;
  steps: string[];
}

/** A pairing for a phone running the SMS Gate app: its code, the URL (also as a QR code) and the steps (docs/devices.md). */
export function AddPhone() {
  const [name, setName] = useState('');
  const [pairing, setPairing] = useState<Pairing | null>(null);
  const [qr, setQr] = useState<string>('');
  const action = useAction();
  useEffect(() => {
    if (pairing) QRCode.toDataURL(pairing.mobile_url, { margin: 1, width: 200 }).then(setQr, () => setQr(''));
  }, [pairing?.mobile_url]);
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => setPairing(ok(await api.POST('/api/v1/device-pairings', { body: name.trim() ? { name: name.trim() } : {} }))));
  };
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'add-phone-title' },
    h('h2', { id: 'add-phone-title' }, 'Add a phone'),
    !pairing &&
      h(
        'form',
        { class: 'form inline', onSubmit: create },
        h(Field, { label: 'Device name (optional)', name: 'name', value: name, onInput: (e: Event) => setName((e.target as HTMLInputElement).value) }),
        h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, 'Create pairing'),
      ),
    action.problem && h(Notice, { kind: 'error' }, message(action.problem)),
    pairing &&
      h(
        'div',
        { class: 'pairing' },
        h(
          'p',
          null,
          'Pairing code: ',
          h('strong', { class: 'code', 'data-testid': 'pairing-code' }, pairing.code),
          ` (valid until ${new Date(pairing.expires_at).toLocaleString()})`,
        ),
        h('p', null, 'API URL: ', h('code', { 'data-testid': 'mobile-url' }, pairing.mobile_url)),
        qr && h('img', { src: qr, width: 200, height: 200, alt: `QR code of the API URL ${pairing.mobile_url}: scan it with the phone's camera to copy it.` }),
        // The steps come from the API (the same words as the CLI and ./pnpmw start print).
        h('ol', { class: 'steps' }, ...pairing.steps.map((step) => h('li', { class: 'wrap' }, step))),
        h('p', { class: 'hint', role: 'status' }, 'The phone appears in the list below once it has enrolled.'),
      ),
  );
}

/** A native device for the modem agent: its token, shown once, in the command that runs the agent. */
export function AddModem(props: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const action = useAction();
  const create = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const device = ok(await api.POST('/api/v1/devices', { body: { name: name.trim() } }));
      setCreated({ name: device.name, token: device.token });
      props.onCreated();
    });
  };
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'add-modem-title' },
    h('h2', { id: 'add-modem-title' }, 'Add a USB modem'),
    !created &&
      h(
        'form',
        { class: 'form inline', onSubmit: create },
        h(Field, {
          label: 'Device name',
          name: 'name',
          required: true,
          value: name,
          error: action.problem ? message(action.problem) : undefined,
          onInput: (e: Event) => setName((e.target as HTMLInputElement).value),
        }),
        h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, 'Create device'),
      ),
    created &&
      h(
        'div',
        null,
        h('p', null, `Device ${created.name} created. Its token is shown only now. On the machine with the modem, run:`),
        h(
          'pre',
          { class: 'command', 'data-testid': 'modem-command' },
          `./pnpmw modem --port /dev/serial/by-id/… --server ${location.origin} --token ${created.token}`,
        ),
        h('p', { class: 'hint' }, 'Find the port with ls -l /dev/serial/by-id/; see docs/devices.md, "USB modems".'),
      ),
  );
}
