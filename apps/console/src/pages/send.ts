import { useState } from 'preact/hooks';
import { segmentInfo } from '@smsgw/core/segments';
import { ApiProblem, api, fieldOf, ok } from '../api/client.ts';
import { loadDevices } from '../api/devices.ts';
import { Button, Field, Notice, Page, h, useAction, useLoad } from '../ui.ts';
import { SentMessages } from './sent-messages.ts';

const FIELDS = ['recipients', 'body', 'group_ids', 'device_id', 'template_id', 'variables'];
// Errors whose code says which field they concern (the others name it in their message, or none).
const FIELD_OF_CODE: Record<string, string> = {
  invalid_phone_number: 'recipients',
  too_many_recipients: 'recipients',
  group_not_found: 'group_ids',
  device_not_found: 'device_id',
  template_not_found: 'template_id',
  template_not_owned: 'template_id',
  missing_variable: 'variables',
};

/** Recipients typed one per line or separated by commas. */
export function parseRecipients(text: string): string[] {
  return text
    .split(/[\n,;]+/)
    .map((s) => s.trim().replace(/[\s()-]/g, ''))
    .filter(Boolean);
}

export function Send() {
  const options = useLoad(async () => {
    const [devices, groups, templates] = await Promise.all([
      loadDevices(),
      api.GET('/api/v1/groups', { params: { query: { limit: 100 } } }).then(ok),
      api.GET('/api/v1/templates', { params: { query: { limit: 100 } } }).then(ok),
    ]);
    return { devices: devices.devices, groups: groups.data, templates: templates.data };
  });
  const [recipients, setRecipients] = useState('');
  const [mode, setMode] = useState<'text' | 'template'>('text');
  const [body, setBody] = useState('');
  const [templateId, setTemplateId] = useState('');
  const [variables, setVariables] = useState<Record<string, string>>({});
  const [groupIds, setGroupIds] = useState<string[]>([]);
  const [deviceId, setDeviceId] = useState('');
  const [sent, setSent] = useState<{ ids: string[]; batchId?: string | undefined } | null>(null);
  const action = useAction();

  const template = options.data?.templates.find((t) => t.id === templateId);
  const info = segmentInfo(body);
  const characters = [...body].length;
  const problem = action.problem instanceof ApiProblem ? action.problem : null;
  const errorField = problem ? fieldOf(problem, FIELD_OF_CODE, FIELDS) : undefined;
  const errorAt = (field: string) => (errorField === field ? problem!.message : undefined);

  const submit = async (e: Event) => {
    e.preventDefault();
    const common = {
      recipients: parseRecipients(recipients),
      ...(groupIds.length > 0 && { group_ids: groupIds }),
      ...(deviceId && { device_id: deviceId }),
    };
    await action.run(async () => {
      const response =
        mode === 'text'
          ? ok(await api.POST('/api/sms/send', { body: { ...common, body } }))
          : ok(await api.POST('/api/sms/send-template', { body: { ...common, template_id: templateId, variables } }));
      setSent({ ids: response.message_ids, batchId: response.batch_id });
    });
  };

  return h(
    Page,
    { title: 'Send' },
    h(
      'form',
      { class: 'form', onSubmit: submit, noValidate: true },
      h(Field, {
        as: 'textarea',
        label: 'Recipients',
        name: 'recipients',
        rows: 3,
        value: recipients,
        error: errorAt('recipients'),
        hint: 'Phone numbers in international format (+15551234567), separated by commas or new lines.',
        onInput: (e: Event) => setRecipients((e.target as HTMLTextAreaElement).value),
      }),
      h(
        'fieldset',
        { class: `field${errorAt('group_ids') ? ' invalid' : ''}` },
        h('legend', null, 'Contact groups'),
        (options.data?.groups ?? []).length === 0 && h('p', { class: 'hint' }, 'No groups yet.'),
        (options.data?.groups ?? []).map((g) =>
          h(
            'label',
            { class: 'check' },
            h('input', {
              type: 'checkbox',
              name: 'group_ids',
              value: g.id,
              checked: groupIds.includes(g.id),
              onChange: (e: Event) => setGroupIds((ids) => ((e.target as HTMLInputElement).checked ? [...ids, g.id] : ids.filter((i) => i !== g.id))),
            }),
            ` ${g.name} (${g.member_count})`,
          ),
        ),
        errorAt('group_ids') && h('div', { class: 'error', role: 'alert', 'data-field': 'group_ids' }, errorAt('group_ids')),
      ),
      h(
        'fieldset',
        { class: 'field' },
        h('legend', null, 'Content'),
        h('label', { class: 'check' }, h('input', { type: 'radio', name: 'mode', checked: mode === 'text', onChange: () => setMode('text') }), ' Write a text'),
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'radio', name: 'mode', checked: mode === 'template', onChange: () => setMode('template') }),
          ' Use a template',
        ),
      ),
      mode === 'text'
        ? h(Field, {
            as: 'textarea',
            label: 'Message',
            name: 'body',
            rows: 5,
            value: body,
            error: errorAt('body'),
            hint: h(
              'span',
              { 'aria-live': 'polite', 'data-testid': 'segments' },
              `${characters} characters · ${body ? info.segments : 0} segment${info.segments === 1 && body ? '' : 's'} · ${info.encoding}`,
            ),
            onInput: (e: Event) => setBody((e.target as HTMLTextAreaElement).value),
          })
        : [
            h(
              Field,
              {
                as: 'select',
                label: 'Template',
                name: 'template_id',
                value: templateId,
                error: errorAt('template_id'),
                onChange: (e: Event) => setTemplateId((e.target as HTMLSelectElement).value),
              },
              h('option', { value: '' }, 'Choose a template'),
              (options.data?.templates ?? []).map((t) => h('option', { value: t.id }, t.name)),
            ),
            template && h('p', { class: 'hint' }, template.body),
            (template?.variables.custom ?? []).map((name) =>
              h(Field, {
                label: `Variable ${name}`,
                name: `variables.${name}`,
                value: variables[name] ?? '',
                onInput: (e: Event) => setVariables((v) => ({ ...v, [name]: (e.target as HTMLInputElement).value })),
              }),
            ),
            errorAt('variables') && h('div', { class: 'error', role: 'alert', 'data-field': 'variables' }, errorAt('variables')),
          ],
      h(
        Field,
        {
          as: 'select',
          label: 'Device',
          name: 'device_id',
          value: deviceId,
          error: errorAt('device_id'),
          onChange: (e: Event) => setDeviceId((e.target as HTMLSelectElement).value),
        },
        h('option', { value: '' }, 'Any available device (round-robin)'),
        (options.data?.devices ?? []).filter((d) => d.enabled).map((d) => h('option', { value: d.id }, `${d.name}${d.available ? '' : ' (offline)'}`)),
      ),
      problem && !errorField && h(Notice, { kind: 'error' }, problem.message),
      action.problem && !problem && h(Notice, { kind: 'error' }, action.problem.message),
      h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, action.busy ? 'Sending…' : 'Send'),
    ),
    sent && h(SentMessages, { ids: sent.ids, batchId: sent.batchId }),
  );
}
