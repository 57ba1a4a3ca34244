import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { api, ok } from '../api/client.ts';
import { loadDevices } from '../api/devices.ts';
import { useLive } from '../live.ts';
import { Notice, Page, Table, h, useLoad, when } from '../ui.ts';

const SERIES = [
  { status: 'queued', color: '#8a8f98' },
  { status: 'sending', color: '#c69026' },
  { status: 'sent', color: '#2f6fdb' },
  { status: 'delivered', color: '#1f8a4c' },
  { status: 'failed', color: '#c8372d' },
  { status: 'cancelled', color: '#6b4fa3' },
] as const;

type Hours = { hour: string; counts: Partial<Record<(typeof SERIES)[number]['status'], number>> }[];

/** Quota, devices online, messages by status over the last 24 hours, recent failures. */
export function Overview() {
  const data = useLoad(async () => {
    const [quota, devices, stats, failures] = await Promise.all([
      api.GET('/api/v1/quota').then(ok),
      loadDevices(),
      api.GET('/api/v1/sms/stats', { params: { query: { hours: 24 } } }).then(ok),
      api.GET('/api/v1/sms', { params: { query: { status: 'failed', limit: 5 } } }).then(ok),
    ]);
    return { quota, devices: devices.devices, stats, failures: failures.data };
  });
  useLive({ onOpen: data.reload });
  const d = data.data;
  const online = d?.devices.filter((x) => x.available).length ?? 0;
  return h(
    Page,
    { title: 'Overview' },
    data.error && h(Notice, { kind: 'error' }, data.error),
    d &&
      h(
        'div',
        { class: 'cards' },
        h(
          'div',
          { class: 'card' },
          h('h2', null, 'Quota'),
          h('p', { class: 'big', 'data-testid': 'quota' }, `${d.quota.used} / ${d.quota.limit}`),
          h('p', null, `Resets ${when(d.quota.resets_at)}`),
        ),
        h(
          'div',
          { class: 'card' },
          h('h2', null, 'Devices online'),
          h('p', { class: 'big', 'data-testid': 'devices-online' }, `${online} / ${d.devices.length}`),
        ),
        h(
          'div',
          { class: 'card' },
          h('h2', null, 'Last 24 hours'),
          h('p', { class: 'big' }, String(d.stats.hours.reduce((n, x) => n + Object.values(x.counts).reduce((a: number, b) => a + (b ?? 0), 0), 0))),
          h('p', null, 'messages'),
        ),
      ),
    d && h(Chart, { hours: d.stats.hours as Hours }),
    d &&
      h(
        'section',
        { 'aria-labelledby': 'failures-title' },
        h('h2', { id: 'failures-title' }, 'Recent failures'),
        h(Table, {
          caption: 'Recent failures',
          head: ['When', 'To', 'Error'],
          empty: 'No failures.',
          rows: d.failures.map((m) => [when(m.updated_at), m.to, m.error ?? '']),
        }),
      ),
  );
}

function Chart(props: { hours: Hours }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const x = props.hours.map((entry) => Date.parse(entry.hour) / 1000);
    const series = SERIES.map((s) => props.hours.map((entry) => entry.counts[s.status] ?? 0));
    const width = () => Math.max(240, el.clientWidth);
    const plot = new uPlot(
      {
        width: width(),
        height: 220,
        series: [{}, ...SERIES.map((s) => ({ label: s.status, stroke: s.color, width: 2, points: { show: false } }))],
        axes: [{}, { size: 40 }],
        scales: { y: { range: (_u: uPlot, _min: number, max: number) => [0, Math.max(1, max)] as [number, number] } },
        legend: { show: true },
      },
      [x, ...series],
      el,
    );
    const resize = () => plot.setSize({ width: width(), height: 220 });
    addEventListener('resize', resize);
    return () => {
      removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [props.hours]);
  const totals = SERIES.map((s) => `${s.status} ${props.hours.reduce((n, entry) => n + (entry.counts[s.status] ?? 0), 0)}`).join(', ');
  return h(
    'figure',
    { class: 'chart' },
    h('figcaption', null, h('h2', null, 'Messages by status, per hour'), h('p', { class: 'hint' }, `Totals: ${totals}.`)),
    h('div', { ref: box, role: 'img', 'aria-label': `Chart of messages per hour over the last 24 hours. Totals: ${totals}.` }),
  );
}
