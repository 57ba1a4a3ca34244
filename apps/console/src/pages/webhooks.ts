import { useState } from 'preact/hooks';
import { ApiProblem, api, fieldOf, ok } from '../api/client.ts';
import { Button, Field, Notice, Page, Status, Table, h, message, useAction, useLoad, useOpenRow, when } from '../ui.ts';

const EVENTS = ['message.sent', 'message.delivered', 'message.failed', 'message.received'] as const;
type EventType = (typeof EVENTS)[number];

/** Webhook endpoints: create (secret shown once), enable or disable, send a test, rotate the secret, the delivery log. */
export function Webhooks() {
  const list = useLoad(async () => ok(await api.GET('/api/v1/webhooks', { params: { query: { limit: 100 } } })));
  const [form, setForm] = useState<{ url: string; events: EventType[]; description: string }>({ url: '', events: [...EVENTS], description: '' });
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [open, setOpen] = useOpenRow(list.data?.data);
  const create = useAction();
  const action = useAction();
  const problem = create.problem instanceof ApiProblem ? create.problem : null;
  const field = problem ? fieldOf(problem, { invalid_webhook_url: 'url' }, ['url', 'events', 'description']) : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = { url: form.url.trim(), events: form.events, ...(form.description.trim() && { description: form.description.trim() }) };
    await create.run(async () => {
      const made = ok(await api.POST('/api/v1/webhooks', { body }));
      setSecret({ url: made.url, secret: made.secret });
      setForm({ url: '', events: [...EVENTS], description: '' });
      list.reload();
    });
  };
  const change = (run: () => Promise<unknown>) => action.run(run).then((done) => done && list.reload());
  return h(
    Page,
    { title: 'Webhooks' },
    h(
      'form',
      { class: 'form', onSubmit: submit, 'aria-label': 'Add an endpoint', noValidate: true },
      h(Field, {
        label: 'Endpoint URL',
        name: 'url',
        type: 'url',
        required: true,
        placeholder: 'https://example.org/smsgw',
        value: form.url,
        error: field === 'url' ? problem!.message : undefined,
        onInput: (e: Event) => setForm({ ...form, url: (e.target as HTMLInputElement).value }),
      }),
      h(
        'fieldset',
        { class: `field${field === 'events' ? ' invalid' : ''}` },
        h('legend', null, 'Events'),
        EVENTS.map((type) =>
          h(
            'label',
            { class: 'check' },
            h('input', {
              type: 'checkbox',
              name: 'events',
              value: type,
              checked: form.events.includes(type),
              onChange: (e: Event) =>
                setForm({ ...form, events: (e.target as HTMLInputElement).checked ? [...form.events, type] : form.events.filter((t) => t !== type) }),
            }),
            ` ${type}`,
          ),
        ),
        field === 'events' && h('div', { class: 'error', role: 'alert', 'data-field': 'events' }, problem!.message),
      ),
      h(Field, {
        label: 'Description (optional)',
        name: 'description',
        value: form.description,
        onInput: (e: Event) => setForm({ ...form, description: (e.target as HTMLInputElement).value }),
      }),
      create.problem && !field && h(Notice, { kind: 'error' }, message(create.problem)),
      h(Button, { type: 'submit', kind: 'primary', disabled: create.busy }, 'Add endpoint'),
    ),
    secret &&
      h(
        Notice,
        { kind: 'ok' },
        `Signing secret of ${secret.url}, shown only now: `,
        h('code', { class: 'wrap', 'data-testid': 'webhook-secret' }, secret.secret),
      ),
    action.problem && h(Notice, { kind: 'error' }, message(action.problem)),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'Webhook endpoints',
        head: ['URL', 'Events', 'State', ''],
        empty: 'No endpoints.',
        rows: list.data.data.map((w) => {
          const path = { id: w.id };
          return [
            h('span', { class: 'wrap' }, w.url),
            w.events.join(', '),
            h(
              'span',
              null,
              h(Status, { status: w.enabled ? 'enabled' : 'disabled' }),
              w.disabled_reason && h('span', { class: 'hint' }, ` ${w.disabled_reason}`),
            ),
            h(
              'span',
              { class: 'row-actions' },
              h(
                Button,
                { onClick: () => change(async () => ok(await api.POST('/api/v1/webhooks/{id}/test', { params: { path } }))).then(() => setOpen(w.id)) },
                'Send test',
              ),
              h(Button, { 'aria-expanded': open === w.id, onClick: () => setOpen(open === w.id ? null : w.id) }, 'Deliveries'),
              h(
                Button,
                { onClick: () => change(async () => ok(await api.PATCH('/api/v1/webhooks/{id}', { params: { path }, body: { enabled: !w.enabled } }))) },
                w.enabled ? 'Disable' : 'Enable',
              ),
              h(
                Button,
                {
                  onClick: () =>
                    change(async () => {
                      const rotated = ok(await api.POST('/api/v1/webhooks/{id}/rotate-secret', { params: { path } }));
                      setSecret({ url: w.url, secret: rotated.secret });
                    }),
                },
                'Rotate secret',
              ),
              h(Button, { kind: 'danger', onClick: () => change(async () => ok(await api.DELETE('/api/v1/webhooks/{id}', { params: { path } }))) }, 'Delete'),
            ),
          ];
        }),
      }),
    open && h(Deliveries, { id: open, key: open }),
  );
}

function Deliveries(props: { id: string }) {
  const log = useLoad(
    async () => ok(await api.GET('/api/v1/webhooks/{id}/deliveries', { params: { path: { id: props.id }, query: { limit: 20 } } })),
    [props.id],
  );
  return h(
    'section',
    { class: 'panel', 'aria-labelledby': 'deliveries-title' },
    h('div', { class: 'page-head' }, h('h2', { id: 'deliveries-title' }, 'Delivery log'), h(Button, { onClick: log.reload }, 'Refresh')),
    log.error && h(Notice, { kind: 'error' }, log.error),
    log.data &&
      h(Table, {
        caption: 'Deliveries, newest first',
        head: ['Created', 'Event', 'State', 'Attempts', 'Last answer', 'Next attempt'],
        empty: 'No deliveries yet.',
        rows: log.data.data.map((d) => [
          when(d.created_at),
          d.type,
          h(Status, { status: d.state }),
          String(d.attempts),
          d.last_status_code !== null ? `HTTP ${d.last_status_code}` : (d.last_error ?? '–'),
          when(d.next_attempt_at),
        ]),
      }),
  );
}
