import { h, type ComponentChildren, type JSX } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiProblem } from './api/client.ts';
import { newestLoad } from './newest-load.ts';

/** Small building blocks shared by the pages: fields with their error, buttons, tables, loading. */
export { h };

let ids = 0;
export function useId(prefix: string): string {
  const [id] = useState(() => `${prefix}-${++ids}`);
  return id;
}

type InputProps = JSX.IntrinsicElements['input'] & JSX.IntrinsicElements['textarea'] & JSX.IntrinsicElements['select'];

/** A labelled input (or textarea, select) with its hint and its error, tied by aria attributes. */
export function Field(
  props: {
    label: string;
    name: string;
    error?: string | undefined;
    hint?: ComponentChildren;
    as?: 'input' | 'textarea' | 'select';
    children?: ComponentChildren;
  } & InputProps,
) {
  const { label, name, error, hint, as = 'input', children, ...rest } = props;
  const id = useId(name);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return h(
    'div',
    { class: `field${error ? ' invalid' : ''}` },
    h('label', { for: id }, label),
    h(as as string, { id, name, 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': described, ...rest }, children),
    hint && h('div', { class: 'hint', id: `${id}-hint` }, hint),
    error && h('div', { class: 'error', id: `${id}-error`, role: 'alert', 'data-field': name }, error),
  );
}

export function Button(props: JSX.IntrinsicElements['button'] & { kind?: 'primary' | 'danger' | 'plain' }) {
  const { kind = 'plain', class: cls, ...rest } = props;
  return h('button', { type: 'button', class: `btn ${kind} ${cls ?? ''}`, ...rest });
}

/** A message over a form or a page: an error the API gave for no field in particular, or a notice. */
export function Notice(props: { kind: 'error' | 'ok'; children?: ComponentChildren }) {
  return h('div', { class: `notice ${props.kind}`, role: props.kind === 'error' ? 'alert' : 'status' }, props.children);
}

export function Table(props: { caption: string; head: string[]; rows: ComponentChildren[][]; empty: string }) {
  if (props.rows.length === 0) return h('p', { class: 'empty' }, props.empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      null,
      h('caption', { class: 'sr-only' }, props.caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          props.head.map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        null,
        props.rows.map((cells) =>
          h(
            'tr',
            null,
            cells.map((c, i) => h('td', { 'data-label': props.head[i] }, c)),
          ),
        ),
      ),
    ),
  );
}

export function Page(props: { title: string; actions?: ComponentChildren; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · smsgw console`;
  }, [props.title]);
  return h(
    'section',
    { class: 'page', 'aria-labelledby': 'page-title' },
    h('header', { class: 'page-head' }, h('h1', { id: 'page-title', tabIndex: -1 }, props.title), props.actions),
    props.children,
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '–';
  const date = new Date(iso);
  return date.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function message(error: unknown): string {
  return error instanceof ApiProblem || error instanceof Error ? error.message : String(error);
}

/**
 * Loads data on mount and on `reload()`; keeps the last data while reloading. Only the newest load
 * is shown: an answer to an older one (a filter changed twice in a row) that arrives late is dropped.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [start] = useState(() =>
    newestLoad<T>({
      data: (data) => setState({ data, loading: false }),
      error: (error) => setState((s) => ({ ...s, error: message(error), loading: false })),
    }),
  );
  const reload = useCallback(() => {
    setState((s) => ({ ...s, loading: true }));
    start(load());
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

/**
 * Which row of a list has its panel open (details, members, deliveries). The panel shows a row only
 * while the list shows it: when the list is read again (a filter, a page, a deletion, a reconnect)
 * without that row, the panel closes, and it stays closed if the row comes back.
 */
export function useOpenRow(rows: readonly { id: string }[] | undefined) {
  const [open, setOpen] = useState<string | null>(null);
  useEffect(() => {
    if (open !== null && rows && !rows.some((row) => row.id === open)) setOpen(null);
  }, [rows]);
  return [open, setOpen] as const;
}

/** Runs an action, keeping its error for display; returns whether it succeeded. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | Error | null>(null);
  const run = async (action: () => Promise<unknown>): Promise<boolean> => {
    setBusy(true);
    setProblem(null);
    try {
      await action();
      return true;
    } catch (error) {
      setProblem(error instanceof Error ? error : new Error(String(error)));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, setProblem, run };
}

export function Status(props: { status: string }) {
  return h('span', { class: `status s-${props.status}` }, props.status);
}

/** The fields of a page whose total is counted up to a cap (messages, received SMS): it pages on by has_more. */
export interface CappedPage {
  data: unknown[];
  total: number;
  total_exact: boolean;
  has_more: boolean;
}

export function Pager(props: { total: number; limit: number; offset: number; onOffset: (offset: number) => void; capped?: CappedPage }) {
  const { total, limit, offset, capped } = props;
  const last = capped ? offset + capped.data.length : Math.min(total, offset + limit);
  const older = capped ? capped.has_more : offset + limit < total;
  return h(
    'nav',
    { class: 'pager', 'aria-label': 'Pages' },
    h(Button, { disabled: offset === 0, onClick: () => props.onOffset(Math.max(0, offset - limit)) }, 'Newer'),
    h('span', null, last === 0 ? '0' : `${offset + 1}–${last} of ${total}${capped && !capped.total_exact ? '+' : ''}`),
    h(Button, { disabled: !older, onClick: () => props.onOffset(offset + limit) }, 'Older'),
  );
}
