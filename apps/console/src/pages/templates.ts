import { useState } from 'preact/hooks';
import { ApiProblem, api, fieldOf, ok } from '../api/client.ts';
import { Button, Field, Notice, Page, Table, h, message, useAction, useLoad } from '../ui.ts';

/** Message templates with {{variables}}: create, delete. */
export function Templates() {
  const list = useLoad(async () => ok(await api.GET('/api/v1/templates', { params: { query: { limit: 100 } } })));
  const [form, setForm] = useState({ name: '', body: '' });
  const action = useAction();
  const problem = action.problem instanceof ApiProblem ? action.problem : null;
  const field = problem ? fieldOf(problem, {}, ['name', 'body']) : undefined;
  const create = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => ok(await api.POST('/api/v1/templates', { body: form })))) {
      setForm({ name: '', body: '' });
      list.reload();
    }
  };
  return h(
    Page,
    { title: 'Templates' },
    h(
      'form',
      { class: 'form', onSubmit: create, 'aria-label': 'Create a template' },
      h(Field, {
        label: 'Name',
        name: 'name',
        required: true,
        value: form.name,
        error: field === 'name' ? problem!.message : undefined,
        onInput: (e: Event) => setForm({ ...form, name: (e.target as HTMLInputElement).value }),
      }),
      h(Field, {
        as: 'textarea',
        rows: 3,
        label: 'Text',
        name: 'body',
        required: true,
        value: form.body,
        error: field === 'body' ? problem!.message : undefined,
        hint: '{{name}} and {{phone}} are filled per recipient; any other {{variable}} is given when sending.',
        onInput: (e: Event) => setForm({ ...form, body: (e.target as HTMLTextAreaElement).value }),
      }),
      action.problem && !field && h(Notice, { kind: 'error' }, message(action.problem)),
      h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, 'Create template'),
    ),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'Templates',
        head: ['Name', 'Text', 'Variables', ''],
        empty: 'No templates.',
        rows: list.data.data.map((t) => [
          t.name,
          h('span', { class: 'clip' }, t.body),
          [...t.variables.reserved, ...t.variables.custom].join(', ') || '–',
          h(
            Button,
            {
              kind: 'danger',
              onClick: () => action.run(async () => ok(await api.DELETE('/api/v1/templates/{id}', { params: { path: { id: t.id } } }))).then(list.reload),
            },
            `Delete ${t.name}`,
          ),
        ]),
      }),
  );
}
