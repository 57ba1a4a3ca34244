import { useEffect, useState } from 'preact/hooks';
import { api, ok } from '../api/client.ts';
import { useLive } from '../live.ts';
import { Status, Table, h, when } from '../ui.ts';

interface Row {
  id: string;
  to: string;
  status: string;
  error: string | null;
  updated_at: string;
}

/** The messages just sent, their status kept current by the live events (and re-read on reconnect). */
export function SentMessages(props: { ids: string[]; batchId?: string | undefined }) {
  const [rows, setRows] = useState<Map<string, Row>>(new Map());
  const reread = async () => {
    const found = props.batchId
      ? ok(await api.GET('/api/v1/sms', { params: { query: { batch_id: props.batchId, limit: 100 } } })).data
      : [ok(await api.GET('/api/v1/sms/{id}', { params: { path: { id: props.ids[0]! } } }))];
    setRows(new Map(found.map((m) => [m.id, m])));
  };
  useEffect(() => void reread(), [props.ids.join()]);
  useLive({
    onOpen: () => void reread(),
    onEvent: (event) => {
      const id = event.data.id as string;
      if (event.type !== 'message.status' || !props.ids.includes(id)) return;
      setRows((current) => {
        const row = current.get(id);
        // Events may arrive out of order: an older update never replaces a newer one.
        if (row && row.updated_at > (event.data.updated_at as string)) return current;
        const next = new Map(current);
        next.set(id, {
          ...(row ?? { to: '…' }),
          id,
          status: event.data.status as string,
          error: event.data.error as string | null,
          updated_at: event.data.updated_at as string,
        });
        return next;
      });
    },
  });
  const list = props.ids.map((id) => rows.get(id)).filter((r): r is Row => r !== undefined);
  return h(
    'section',
    { class: 'sent', 'aria-labelledby': 'sent-title' },
    h('h2', { id: 'sent-title' }, `Sent: ${props.ids.length} message${props.ids.length === 1 ? '' : 's'}`),
    h(Table, {
      caption: 'Messages just sent',
      head: ['To', 'Status', 'Updated', 'Error'],
      empty: 'Loading…',
      rows: list.map((m) => [m.to, h('span', { 'data-message-id': m.id }, h(Status, { status: m.status })), when(m.updated_at), m.error ?? '']),
    }),
  );
}
