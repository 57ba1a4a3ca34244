import { useEffect, useState } from 'preact/hooks';
import { DEVICE_PROTOCOLS } from '@smsgw/core/device-protocols';
import { api, ok } from '../api/client.ts';
import { loadDevices } from '../api/devices.ts';
import { Button, Notice, Page, Status, Table, h, message, useAction, useLoad, when } from '../ui.ts';
import { AddModem, AddPhone } from './add-device.ts';
import { DeviceLimits, limitsText } from './device-limits.ts';

// While a pairing is shown, the list is read again this often, so the phone appears when it enrols.
const WATCH_MS = 2000;

/** Devices with their state and a day's messages; pairing a phone, adding a modem, disabling, deleting. */
export function Devices() {
  const [adding, setAdding] = useState<'phone' | 'modem' | null>(null);
  // Pages of devices shown (500 each): reading the list again reads as many.
  const [pages, setPages] = useState(1);
  const list = useLoad(async () => {
    const [{ devices, more }, stats] = await Promise.all([loadDevices(pages), api.GET('/api/v1/sms/stats', { params: { query: { hours: 24 } } }).then(ok)]);
    return { devices, more, today: new Map(stats.devices.map((d) => [d.device_id, d.messages])) };
  }, [pages]);
  useEffect(() => {
    if (adding !== 'phone') return;
    const timer = setInterval(list.reload, WATCH_MS);
    return () => clearInterval(timer);
  }, [adding]);
  const action = useAction();
  const [confirming, setConfirming] = useState<string | null>(null);
  const [limiting, setLimiting] = useState<string | null>(null);
  const change = (run: () => Promise<unknown>) => action.run(run).then((done) => done && list.reload());

  return h(
    Page,
    {
      title: 'Devices',
      actions: h(
        'div',
        { class: 'actions' },
        h(Button, { kind: 'primary', 'aria-expanded': adding === 'phone', onClick: () => setAdding(adding === 'phone' ? null : 'phone') }, 'Add phone'),
        h(Button, { 'aria-expanded': adding === 'modem', onClick: () => setAdding(adding === 'modem' ? null : 'modem') }, 'Add modem'),
      ),
    },
    adding === 'phone' && h(AddPhone, null),
    adding === 'modem' && h(AddModem, { onCreated: list.reload }),
    (() => {
      const device = list.data?.devices.find((d) => d.id === limiting);
      return (
        device &&
        h(DeviceLimits, {
          device,
          onSaved: () => {
            setLimiting(null);
            list.reload();
          },
          onClose: () => setLimiting(null),
        })
      );
    })(),
    list.error && h(Notice, { kind: 'error' }, list.error),
    action.problem && h(Notice, { kind: 'error' }, message(action.problem)),
    list.data &&
      h(Table, {
        caption: 'Devices',
        head: ['Name', 'Kind', 'State', 'Last seen', 'App version', 'Messages (24 h)', 'Rate limits', ''],
        empty: 'No devices yet: add a phone or a modem.',
        rows: list.data.devices.map((d) => [
          h('span', { 'data-device-name': d.name }, d.name),
          DEVICE_PROTOCOLS[d.protocol].label,
          h(
            'span',
            null,
            h(Status, { status: !d.enabled ? 'disabled' : d.available ? 'online' : 'offline' }),
            d.warnings.length > 0 && h('span', { class: 'hint' }, ` ${d.warnings.join(' ')}`),
          ),
          when(d.last_seen_at),
          d.app_version ?? '–',
          String(list.data!.today.get(d.id) ?? 0),
          h('span', { 'data-limits': d.name }, limitsText(d)),
          h(
            'span',
            { class: 'row-actions' },
            h(Button, { 'aria-expanded': limiting === d.id, onClick: () => setLimiting(limiting === d.id ? null : d.id) }, `Limits of ${d.name}`),
            h(
              Button,
              {
                onClick: () =>
                  change(async () => ok(await api.PATCH('/api/v1/devices/{id}', { params: { path: { id: d.id } }, body: { enabled: !d.enabled } }))),
              },
              d.enabled ? `Disable ${d.name}` : `Enable ${d.name}`,
            ),
            confirming === d.id
              ? h(
                  Button,
                  { kind: 'danger', onClick: () => change(async () => ok(await api.DELETE('/api/v1/devices/{id}', { params: { path: { id: d.id } } }))) },
                  `Confirm delete ${d.name}`,
                )
              : h(Button, { kind: 'danger', onClick: () => setConfirming(d.id) }, `Delete ${d.name}`),
          ),
        ]),
      }),
    list.data?.more && h(Button, { onClick: () => setPages(pages + 1) }, 'Show more devices'),
  );
}
