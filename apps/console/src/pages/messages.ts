import { useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { loadDevices } from '../api/devices.ts';
import { useLive } from '../live.ts';
import { Button, Field, Notice, Page, Pager, Status, Table, h, useLoad, useOpenRow, when } from '../ui.ts';
import { MessageDetail } from './message-detail.ts';

const STATUSES = ['queued', 'sending', 'sent', 'delivered', 'failed', 'cancelled'] as const;
type StatusFilter = (typeof STATUSES)[number];
const LIMIT = 20;

export function Messages() {
  const [tab, setTab] = useState<'sent' | 'received'>('sent');
  return h(
    Page,
    { title: 'Messages' },
    h(
      'div',
      { class: 'tabs', role: 'tablist', 'aria-label': 'Messages' },
      (['sent', 'received'] as const).map((t) =>
        h(
          'button',
          {
            type: 'button',
            role: 'tab',
            id: `tab-${t}`,
            'aria-selected': tab === t,
            'aria-controls': `panel-${t}`,
            tabIndex: tab === t ? 0 : -1,
            class: 'tab',
            onClick: () => setTab(t),
            onKeyDown: (e: KeyboardEvent) => {
              if (e.key === 'ArrowRight' || e.key === 'ArrowLeft') {
                const other = t === 'sent' ? 'received' : 'sent';
                setTab(other);
                document.getElementById(`tab-${other}`)?.focus();
              }
            },
          },
          t === 'sent' ? 'Sent' : 'Received',
        ),
      ),
    ),
    h('div', { role: 'tabpanel', id: `panel-${tab}`, 'aria-labelledby': `tab-${tab}` }, tab === 'sent' ? h(SentList, null) : h(ReceivedList, null)),
  );
}

function SentList() {
  const [filters, setFilters] = useState({ status: '', to: '', device_id: '', batch_id: '' });
  // What is typed in the text filters, applied on Enter or leaving the field: the fields show this,
  // so that a render of an earlier filter change never puts back the old text under the typing.
  const [typed, setTyped] = useState({ to: '', batch_id: '' });
  const [offset, setOffset] = useState(0);
  const devices = useLoad(async () => (await loadDevices()).devices);
  const list = useLoad(async () => {
    const query = {
      limit: LIMIT,
      offset,
      ...(filters.status && { status: filters.status as StatusFilter }),
      ...(filters.to.trim() && { to: filters.to.trim() }),
      ...(filters.device_id && { device_id: filters.device_id }),
      ...(filters.batch_id.trim() && { batch_id: filters.batch_id.trim() }),
    };
    return ok(await api.GET('/api/v1/sms', { params: { query } }));
  }, [JSON.stringify(filters), offset]);
  const [open, setOpen] = useOpenRow(list.data?.data);
  const [live, setLive] = useState<Record<string, { status: string; error: string | null }>>({});
  useLive({
    onOpen: list.reload,
    onEvent: (event) => {
      if (event.type === 'message.status')
        setLive((l) => ({ ...l, [event.data.id as string]: { status: event.data.status as string, error: event.data.error as string | null } }));
    },
  });
  const set = (name: keyof typeof filters) => (e: Event) => {
    setOffset(0);
    setFilters((f) => ({ ...f, [name]: (e.target as HTMLInputElement).value }));
  };
  const typing = (name: keyof typeof typed) => (e: Event) => {
    const { value } = e.target as HTMLInputElement;
    setTyped((t) => ({ ...t, [name]: value }));
  };
  const deviceName = (id: string | null) => devices.data?.find((d) => d.id === id)?.name ?? (id ? id.slice(0, 8) : '–');
  return h(
    'div',
    null,
    h(
      'form',
      { class: 'filters', role: 'search', onSubmit: (e: Event) => e.preventDefault() },
      h(
        Field,
        { as: 'select', label: 'Status', name: 'status', value: filters.status, onChange: set('status') },
        h('option', { value: '' }, 'Any'),
        STATUSES.map((s) => h('option', { value: s }, s)),
      ),
      h(Field, { label: 'Recipient', name: 'to', value: typed.to, placeholder: '+15551234567', onInput: typing('to'), onChange: set('to') }),
      h(
        Field,
        { as: 'select', label: 'Device', name: 'device_id', value: filters.device_id, onChange: set('device_id') },
        h('option', { value: '' }, 'Any'),
        (devices.data ?? []).map((d) => h('option', { value: d.id }, d.name)),
      ),
      h(Field, { label: 'Batch', name: 'batch_id', value: typed.batch_id, placeholder: 'batch id', onInput: typing('batch_id'), onChange: set('batch_id') }),
    ),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'Sent messages, newest first',
        head: ['Created', 'To', 'Status', 'Device', 'Text', ''],
        empty: 'No messages match.',
        rows: list.data.data.map((m) => {
          const current = live[m.id] ?? m;
          return [
            when(m.created_at),
            m.to,
            h('span', { 'data-message-id': m.id }, h(Status, { status: current.status })),
            deviceName(m.device_id),
            h('span', { class: 'clip' }, m.message),
            h(Button, { 'aria-expanded': open === m.id, onClick: () => setOpen(open === m.id ? null : m.id) }, open === m.id ? 'Hide' : 'Details'),
          ];
        }),
      }),
    open && h(MessageDetail, { id: open, status: live[open]?.status ?? list.data?.data.find((m) => m.id === open)?.status, onClose: () => setOpen(null) }),
    list.data && h(Pager, { total: list.data.total, limit: LIMIT, offset, onOffset: setOffset, capped: list.data }),
  );
}

function ReceivedList() {
  const [offset, setOffset] = useState(0);
  const [from, setFrom] = useState('');
  const list = useLoad(
    async () => ok(await api.GET('/api/v1/sms/received', { params: { query: { limit: LIMIT, offset, ...(from.trim() && { from: from.trim() }) } } })),
    [offset, from],
  );
  useLive({ onOpen: list.reload, onEvent: (event) => event.type === 'sms.received' && offset === 0 && list.reload() });
  return h(
    'div',
    null,
    h(
      'form',
      { class: 'filters', role: 'search', onSubmit: (e: Event) => e.preventDefault() },
      h(Field, {
        label: 'Sender',
        name: 'from',
        value: from,
        onChange: (e: Event) => {
          setOffset(0);
          setFrom((e.target as HTMLInputElement).value);
        },
      }),
    ),
    list.error && h(Notice, { kind: 'error' }, list.error),
    list.data &&
      h(Table, {
        caption: 'Received SMS, newest first',
        head: ['Received', 'From', 'To', 'Text'],
        empty: 'No SMS received yet.',
        rows: list.data.data.map((r) => [when(r.received_at), r.from, r.to ?? '–', r.message]),
      }),
    list.data && h(Pager, { total: list.data.total, limit: LIMIT, offset, onOffset: setOffset, capped: list.data }),
  );
}
