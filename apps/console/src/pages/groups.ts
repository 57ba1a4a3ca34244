import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { Button, Field, Notice, Page, Table, h, message, useAction, useLoad, useOpenRow } from '../ui.ts';

/** Contact groups: create, delete, and their members (add by phone, remove). */
export function Groups() {
  const list = useLoad(async () => ok(await api.GET('/api/v1/groups', { params: { query: { limit: 100 } } })));
  const [name, setName] = useState('');
  const [open, setOpen] = useOpenRow(list.data?.data);
  const action = useAction();
  const create = async (e: Event) => {
    e.preventDefault();
    if (await action.run(async () => ok(await api.POST('/api/v1/groups', { body: { name: name.trim() } })))) {
      setName('');
      list.reload();
    }
  };
  return h(
    Page,
    { title: 'Groups' },
    h(
      'form',
      { class: 'form inline', onSubmit: create, 'aria-label': 'Create a group' },
      h(Field, {
        label: 'Group name',
        name: 'name',
        required: true,
        value: name,
        error: action.problem ? message(action.problem) : undefined,
        onInput: (e: Event) => setName((e.target as HTMLInputElement).value),
      }),
      h(Button, { type: 'submit', kind: 'primary', disabled: action.busy }, 'Create group'),
    ),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'Groups',
        head: ['Name', 'Members', ''],
        empty: 'No groups.',
        rows: list.data.data.map((g) => [
          g.name,
          String(g.member_count),
          h(
            'span',
            { class: 'row-actions' },
            h(Button, { 'aria-expanded': open === g.id, onClick: () => setOpen(open === g.id ? null : g.id) }, `Members of ${g.name}`),
            h(
              Button,
              {
                kind: 'danger',
                onClick: () => action.run(async () => ok(await api.DELETE('/api/v1/groups/{id}', { params: { path: { id: g.id } } }))).then(list.reload),
              },
              `Delete ${g.name}`,
            ),
          ),
        ]),
      }),
    open && h(Members, { id: open, key: open, onChange: list.reload }),
  );
}

function Members(props: { id: string; onChange: () => void }) {
  const path = { id: props.id };
  const members = useLoad(async () => ok(await api.GET('/api/v1/groups/{id}/members', { params: { path, query: { limit: 100 } } })), [props.id]);
  const [phones, setPhones] = useState('');
  const action = useAction();
  const changed = () => {
    members.reload();
    props.onChange();
  };
  const add = async (e: Event) => {
    e.preventDefault();
    const list = phones
      .split(/[\n,;]+/)
      .map((p) => p.trim())
      .filter(Boolean);
    if (await action.run(async () => ok(await api.POST('/api/v1/groups/{id}/members', { params: { path }, body: { phones: list } })))) {
      setPhones('');
      changed();
    }
  };
  return h(
    'section',
    { class: 'panel', 'aria-label': 'Members' },
    h(
      'form',
      { class: 'form inline', onSubmit: add },
      h(Field, {
        label: 'Add members by phone',
        name: 'phones',
        value: phones,
        hint: 'Separated by commas; a number without a contact gets one.',
        error: action.problem ? message(action.problem) : undefined,
        onInput: (e: Event) => setPhones((e.target as HTMLInputElement).value),
      }),
      h(Button, { type: 'submit', disabled: action.busy }, 'Add'),
    ),
    members.data &&
      h(Table, {
        caption: 'Members',
        head: ['Name', 'Phone', ''],
        empty: 'No members.',
        rows: members.data.data.map((m) => [
          m.name,
          m.phone,
          h(
            Button,
            {
              onClick: () =>
                action
                  .run(async () => ok(await api.DELETE('/api/v1/groups/{id}/members/{contactId}', { params: { path: { id: props.id, contactId: m.id } } })))
                  .then(changed),
            },
            `Remove ${m.name}`,
          ),
        ]),
      }),
  );
}
