import { render, type ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { onSignedOut, signOut, token } from './api/client.ts';
import { onLiveState, startLive, stopLive } from './live.ts';
import { h } from './ui.ts';
import { SignIn } from './pages/sign-in.ts';
import { Overview } from './pages/overview.ts';
import { Send } from './pages/send.ts';
import { Messages } from './pages/messages.ts';
import { Devices } from './pages/devices.ts';
import { Contacts } from './pages/contacts.ts';
import { Groups } from './pages/groups.ts';
import { Templates } from './pages/templates.ts';
import { Webhooks } from './pages/webhooks.ts';
import { ApiKeys } from './pages/api-keys.ts';
import './styles.css';

/** The pages, by their path under /console/. */
const PAGES: { path: string; label: string; page: ComponentType }[] = [
  { path: '', label: 'Overview', page: Overview },
  { path: 'send', label: 'Send', page: Send },
  { path: 'messages', label: 'Messages', page: Messages },
  { path: 'devices', label: 'Devices', page: Devices },
  { path: 'contacts', label: 'Contacts', page: Contacts },
  { path: 'groups', label: 'Groups', page: Groups },
  { path: 'templates', label: 'Templates', page: Templates },
  { path: 'webhooks', label: 'Webhooks', page: Webhooks },
  { path: 'api-keys', label: 'API keys', page: ApiKeys },
];
// Vite's `base` (vite.config.ts): where the API serves the console.
const BASE = '/console/';

function currentPath(): string {
  return location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length).replace(/\/$/, '') : '';
}

export function navigate(path: string): void {
  history.pushState(null, '', BASE + path);
  dispatchEvent(new PopStateEvent('popstate'));
}

function App() {
  const [signedIn, setSignedIn] = useState(() => token() !== null);
  const [expired, setExpired] = useState(false);
  const [path, setPath] = useState(currentPath);
  const [live, setLive] = useState(false);
  const [menuOpen, setMenuOpen] = useState(false);

  useEffect(() => {
    const onPop = () => {
      setPath(currentPath());
      setMenuOpen(false);
      document.getElementById('page-title')?.focus();
    };
    addEventListener('popstate', onPop);
    const stopSignedOut = onSignedOut((reason) => {
      setSignedIn(false);
      setExpired(reason === 'expired');
    });
    const stopState = onLiveState(setLive);
    return () => {
      removeEventListener('popstate', onPop);
      stopSignedOut();
      stopState();
    };
  }, []);
  useEffect(() => {
    if (!signedIn) return;
    startLive();
    return stopLive;
  }, [signedIn]);

  if (!signedIn) return h(SignIn, { expired, onSignedIn: () => setSignedIn(true) });
  const current = PAGES.find((p) => p.path === path) ?? PAGES[0]!;
  return h(
    'div',
    { class: 'shell' },
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h(
        'a',
        {
          class: 'brand',
          href: BASE,
          onClick: (e: MouseEvent) => {
            e.preventDefault();
            navigate('');
          },
        },
        'smsgw',
      ),
      h('span', { class: `live ${live ? 'on' : 'off'}`, title: live ? 'Live updates connected' : 'Live updates reconnecting' }, live ? 'live' : 'offline'),
      h(
        'button',
        { type: 'button', class: 'btn plain menu-toggle', 'aria-expanded': menuOpen, 'aria-controls': 'nav', onClick: () => setMenuOpen(!menuOpen) },
        'Menu',
      ),
      h('button', { type: 'button', class: 'btn plain', onClick: () => signOut() }, 'Sign out'),
    ),
    h(
      'nav',
      { id: 'nav', class: `nav${menuOpen ? ' open' : ''}`, 'aria-label': 'Pages' },
      h(
        'ul',
        null,
        PAGES.map((p) =>
          h(
            'li',
            null,
            h(
              'a',
              {
                href: BASE + p.path,
                'aria-current': p === current ? 'page' : undefined,
                onClick: (e: MouseEvent) => {
                  if (e.ctrlKey || e.metaKey || e.shiftKey) return;
                  e.preventDefault();
                  navigate(p.path);
                },
              },
              p.label,
            ),
          ),
        ),
      ),
    ),
    h('main', { id: 'main' }, h(current.page, { key: current.path })),
  );
}

render(h(App, null), document.getElementById('app')!);
