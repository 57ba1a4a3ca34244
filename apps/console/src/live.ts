import { useEffect, useRef } from 'preact/hooks';
import { openEvents, type StreamEvent } from './api/events.ts';

/** One event stream per tab, shared by the pages: each page listens while it is shown. */
type Listener = { onEvent?: (event: StreamEvent) => void; onOpen?: () => void };
const listeners = new Set<Listener>();
const states = new Set<(live: boolean) => void>();
let close: (() => void) | undefined;

export function startLive(): void {
  close ??= openEvents({
    onEvent: (event) => {
      for (const l of listeners) l.onEvent?.(event);
    },
    onOpen: () => {
      for (const l of listeners) l.onOpen?.();
    },
    onState: (live) => {
      for (const s of states) s(live);
    },
  });
}

export function stopLive(): void {
  close?.();
  close = undefined;
}

/** Runs `onEvent` for each live event and `onOpen` on each (re)connection, while the component is mounted. */
export function useLive(listener: Listener): void {
  const current = useRef(listener);
  current.current = listener;
  useEffect(() => {
    const relay: Listener = { onEvent: (e) => current.current.onEvent?.(e), onOpen: () => current.current.onOpen?.() };
    listeners.add(relay);
    return () => void listeners.delete(relay);
  }, []);
}

export function onLiveState(listener: (live: boolean) => void): () => void {
  states.add(listener);
  return () => void states.delete(listener);
}
