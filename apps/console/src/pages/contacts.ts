import { useState } from 'preact/hooks';
import { ApiProblem, api, fieldOf, ok } from '../api/client.ts';
import { Button, Field, Notice, Page, Pager, Table, h, message, useAction, useLoad, when } from '../ui.ts';

const LIMIT = 20;

/** The address book: a paged list, adding one contact, deleting, and importing a CSV file (name,phone). */
export function Contacts() {
  const [offset, setOffset] = useState(0);
  const [search, setSearch] = useState('');
  const list = useLoad(
    async () => ok(await api.GET('/api/v1/contacts', { params: { query: { limit: LIMIT, offset, ...(search.trim() && { name: search.trim() }) } } })),
    [offset, search],
  );
  const [form, setForm] = useState({ name: '', phone: '' });
  const add = useAction();
  const remove = useAction();
  const problem = add.problem instanceof ApiProblem ? add.problem : null;
  const field = problem ? fieldOf(problem, { invalid_phone_number: 'phone', conflict: 'phone' }, ['name', 'phone']) : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (await add.run(async () => ok(await api.POST('/api/v1/contacts', { body: form })))) {
      setForm({ name: '', phone: '' });
      list.reload();
    }
  };
  return h(
    Page,
    { title: 'Contacts' },
    h(
      'form',
      { class: 'form inline', onSubmit: submit, 'aria-label': 'Add a contact' },
      h(Field, {
        label: 'Name',
        name: 'name',
        required: true,
        value: form.name,
        error: field === 'name' ? problem!.message : undefined,
        onInput: (e: Event) => setForm({ ...form, name: (e.target as HTMLInputElement).value }),
      }),
      h(Field, {
        label: 'Phone',
        name: 'phone',
        required: true,
        placeholder: '+15551234567',
        value: form.phone,
        error: field === 'phone' ? problem!.message : undefined,
        onInput: (e: Event) => setForm({ ...form, phone: (e.target as HTMLInputElement).value }),
      }),
      h(Button, { type: 'submit', kind: 'primary', disabled: add.busy }, 'Add contact'),
    ),
    add.problem && !field && h(Notice, { kind: 'error' }, message(add.problem)),
    h(CsvImport, { onImported: list.reload }),
    h(
      'form',
      { class: 'filters', role: 'search', onSubmit: (e: Event) => e.preventDefault() },
      h(Field, {
        label: 'Search by name',
        name: 'search',
        value: search,
        onInput: (e: Event) => {
          setOffset(0);
          setSearch((e.target as HTMLInputElement).value);
        },
      }),
    ),
    list.error && h(Notice, { kind: 'error' }, list.error),
    remove.problem && h(Notice, { kind: 'error' }, message(remove.problem)),
    list.data &&
      h(Table, {
        caption: 'Contacts',
        head: ['Name', 'Phone', 'Added', ''],
        empty: 'No contacts.',
        rows: list.data.data.map((c) => [
          c.name,
          c.phone,
          when(c.created_at),
          h(
            Button,
            {
              kind: 'danger',
              onClick: () => remove.run(async () => ok(await api.DELETE('/api/v1/contacts/{id}', { params: { path: { id: c.id } } }))).then(list.reload),
            },
            `Delete ${c.name}`,
          ),
        ]),
      }),
    list.data && h(Pager, { total: list.data.total, limit: LIMIT, offset, onOffset: setOffset }),
  );
}

function CsvImport(props: { onImported: () => void }) {
  const [result, setResult] = useState<string>('');
  const action = useAction();
  const upload = async (e: Event) => {
    e.preventDefault();
    const file = ((e.target as HTMLFormElement).elements.namedItem('csv') as HTMLInputElement).files?.[0];
    if (!file) return;
    const text = await file.text();
    await action.run(async () => {
      const done = ok(
        await api.POST('/api/v1/contacts/import', {
          body: text,
          headers: { 'content-type': 'text/csv' },
          bodySerializer: (body: unknown) => body as string,
        }),
      );
      setResult(`Imported: ${done.created} new, ${done.updated} updated.`);
      props.onImported();
    });
  };
  return h(
    'form',
    { class: 'form inline', onSubmit: upload, 'aria-label': 'Import contacts from CSV' },
    h(Field, {
      label: 'Import a CSV file',
      name: 'csv',
      type: 'file',
      accept: '.csv,text/csv',
      hint: 'A header row name,phone, then one contact per line; up to 10,000; all or nothing.',
      error: action.problem ? message(action.problem) : undefined,
    }),
    h(Button, { type: 'submit', disabled: action.busy }, 'Import contacts'),
    result && h(Notice, { kind: 'ok' }, result),
  );
}
