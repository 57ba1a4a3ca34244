import { api, ok } from '../api/client.ts';
import { Button, Notice, Status, Table, h, useLoad, when } from '../ui.ts';

/**
 * One message: its fields and the history of its states with their times. `status` is the one the
 * list shows for it (live events included): when it changes, the message and its history are read again.
 */
export function MessageDetail(props: { id: string; status: string | undefined; onClose: () => void }) {
  const detail = useLoad(async () => {
    const path = { id: props.id };
    const [message, history] = await Promise.all([
      api.GET('/api/v1/sms/{id}', { params: { path } }).then(ok),
      api.GET('/api/v1/sms/{id}/history', { params: { path } }).then(ok),
    ]);
    return { message, history: history.data };
  }, [props.id, props.status]);
  const m = detail.data?.message;
  return h(
    'section',
    { class: 'detail', 'aria-labelledby': 'detail-title' },
    h('h2', { id: 'detail-title' }, 'Message details'),
    detail.error && h(Notice, { kind: 'error' }, detail.error),
    m &&
      h(
        'dl',
        { class: 'facts' },
        ...[
          ['Id', m.id],
          ['To', m.to],
          ['Status', h(Status, { status: m.status })],
          ['Segments', `${m.segments} (${m.encoding})`],
          ['Batch', m.batch_id ?? '–'],
          ['Device', m.device_id ?? '–'],
          ['Error', m.error ?? '–'],
          ['Text', m.message],
        ].flatMap(([k, v]) => [h('dt', null, k), h('dd', null, v)]),
      ),
    detail.data &&
      h(Table, {
        caption: 'History of states',
        head: ['When', 'State', 'Detail'],
        empty: 'No history.',
        rows: detail.data.history.map((e) => [when(e.at), h(Status, { status: e.state }), e.detail ?? '']),
      }),
    h(Button, { onClick: props.onClose }, 'Close details'),
  );
}
