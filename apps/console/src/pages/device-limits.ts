import { useState } from 'preact/hooks';
import { ApiProblem, api, fieldOf, ok } from '../api/client.ts';
import { Button, Field, Notice, h, message, useAction } from '../ui.ts';

const WINDOWS = [
  { field: 'rate_limit_per_minute', label: 'Per minute', short: 'min' },
  { field: 'rate_limit_per_hour', label: 'Per hour', short: 'h' },
  { field: 'rate_limit_per_day', label: 'Per day', short: 'day' },
] as const;
/** Carrier budgets (docs/devices.md, "Carrier budgets") of the device as a whole; per SIM through the API or the CLI. */
const BUDGETS = [
  { field: 'segments_per_hour', label: 'Segments an hour', short: 'seg/h' },
  { field: 'segments_per_day', label: 'Segments a day', short: 'seg/day' },
  { field: 'segments_per_month', label: 'Segments a month', short: 'seg/month' },
  { field: 'unique_recipients_per_month', label: 'Recipients a month', short: 'recipients/month' },
] as const;
const FIELDS = [...WINDOWS, ...BUDGETS];
type LimitField = (typeof FIELDS)[number]['field'];
type Limits = Record<LimitField, number | null>;

/** A device's rate limits and budgets in a few words: "6/min, 500/day, 100 seg/h", or "none". */
export function limitsText(device: Limits): string {
  const set = [
    ...WINDOWS.filter((w) => device[w.field] !== null).map((w) => `${device[w.field]}/${w.short}`),
    ...BUDGETS.filter((b) => device[b.field] !== null).map((b) => `${device[b.field]} ${b.short}`),
  ];
  return set.length > 0 ? set.join(', ') : 'none';
}

/**
 * Pacing (docs/devices.md, "Pacing"): the most messages the device is handed in any minute, hour and
 * day; an empty field removes that limit. The API's refusal is shown at the field it names.
 */
export function DeviceLimits(props: { device: { id: string; name: string } & Limits; onSaved: () => void; onClose: () => void }) {
  const { device } = props;
  const [form, setForm] = useState<Record<LimitField, string>>(
    () => Object.fromEntries(FIELDS.map((f) => [f.field, device[f.field]?.toString() ?? ''])) as Record<LimitField, string>,
  );
  const save = useAction();
  const problem = save.problem instanceof ApiProblem ? save.problem : null;
  const field = problem
    ? fieldOf(
        problem,
        {},
        FIELDS.map((w) => w.field),
      )
    : undefined;
  const submit = async (e: Event) => {
    e.preventDefault();
    const body = Object.fromEntries(FIELDS.map((w) => [w.field, form[w.field].trim() === '' ? null : Number(form[w.field])])) as Limits;
    if (await save.run(async () => ok(await api.PATCH('/api/v1/devices/{id}', { params: { path: { id: device.id } }, body })))) props.onSaved();
  };
  return h(
    'form',
    { class: 'panel form inline', onSubmit: submit, 'aria-label': `Rate limits of ${device.name}` },
    h('h2', null, `Rate limits and carrier budgets of ${device.name}`),
    h(
      'p',
      { class: 'hint' },
      'At most this many messages are handed to the device in any window, and at most this many message parts (segments) and different recipients (rolling hour, UTC day and month); round-robin gives the rest to your other devices, messages sent to this device wait. Empty: no limit.',
    ),
    ...FIELDS.map((w) =>
      h(Field, {
        label: w.label,
        name: w.field,
        type: 'number',
        min: 1,
        inputMode: 'numeric',
        value: form[w.field],
        error: field === w.field ? problem!.message : undefined,
        onInput: (e: Event) => setForm({ ...form, [w.field]: (e.target as HTMLInputElement).value }),
      }),
    ),
    h(Button, { type: 'submit', kind: 'primary', disabled: save.busy }, 'Save limits'),
    h(Button, { onClick: props.onClose }, 'Close'),
    save.problem && !field && h(Notice, { kind: 'error' }, message(save.problem)),
  );
}
