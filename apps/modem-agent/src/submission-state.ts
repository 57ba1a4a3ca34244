import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';

/**
 * What the agent took and what it gave the modem, in a small JSON file, so that no message is
 * submitted twice, also across a restart:
 *
 * - `held`: acknowledged to smsgw (`sending`), not yet given to the modem. smsgw offers it no more,
 *   so a restarted agent submits it from here.
 * - `submitting`: written *before* the first part goes to the modem. A restarted agent that finds
 *   a message here cannot know whether the part in flight reached the network: it never submits it
 *   again and reports it failed. This is the one crash window, as short as one AT+CMGS.
 * - `sent`: every part accepted, with its message references; kept until the status reports come,
 *   so that a `+CDS` after a restart still finds its message.
 * - `final`: delivered or failed, kept until smsgw has accepted that report.
 *
 * Every change is written to a temporary file, flushed and renamed over the old one.
 */
export type Phase = 'held' | 'submitting' | 'sent' | 'final';

export interface Submission {
  id: string;
  to: string;
  message: string;
  validUntil: string;
  phase: Phase;
  /** Message reference of each part accepted so far, in order. */
  refs: number[];
  /** Parts whose status report said delivered. */
  deliveredRefs: number[];
  /** `retryable`: refused by the network before any part was accepted (a +CMS ERROR answered the first +CMGS). */
  outcome?: { status: 'delivered' | 'failed'; error?: string; retryable?: boolean };
  /** When the entry last changed (ISO): old `sent` entries whose reports never came are dropped. */
  at: string;
}

// Status reports normally come within minutes; the network keeps trying for up to its validity period.
const KEEP_SENT_MS = 3 * 24 * 3600_000;

export class SubmissionState {
  private readonly entries = new Map<string, Submission>();

  private constructor(private readonly path: string) {}

  static load(path: string): SubmissionState {
    const state = new SubmissionState(path);
    let text: string | undefined;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text) for (const entry of (JSON.parse(text) as { submissions: Submission[] }).submissions) state.entries.set(entry.id, entry);
    return state;
  }

  get(id: string): Submission | undefined {
    return this.entries.get(id);
  }

  all(): Submission[] {
    return [...this.entries.values()];
  }

  hold(messages: { id: string; to: string; message: string; valid_until: string }[]): void {
    for (const m of messages)
      this.entries.set(m.id, { id: m.id, to: m.to, message: m.message, validUntil: m.valid_until, phase: 'held', refs: [], deliveredRefs: [], at: now() });
    this.save();
  }

  update(id: string, change: Partial<Pick<Submission, 'phase' | 'refs' | 'deliveredRefs' | 'outcome'>>): Submission | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    Object.assign(entry, change, { at: now() });
    this.save();
    return entry;
  }

  /** Records the reference the modem gave a part; an older message with the same (recycled) reference loses it. */
  addRef(id: string, ref: number): void {
    for (const other of this.entries.values()) {
      if (other.id !== id && other.refs.includes(ref) && other.phase !== 'submitting') other.refs = other.refs.filter((r) => r !== ref);
    }
    const entry = this.entries.get(id);
    if (entry) this.update(id, { refs: [...entry.refs, ref] });
  }

  /** The message a status report is about: the newest one sent, or being submitted, with that reference. */
  byRef(ref: number): Submission | undefined {
    return this.all()
      .filter((entry) => (entry.phase === 'sent' || entry.phase === 'submitting') && entry.refs.includes(ref))
      .sort((a, b) => b.at.localeCompare(a.at))[0];
  }

  remove(ids: string[]): void {
    let changed = false;
    for (const id of ids) changed = this.entries.delete(id) || changed;
    if (changed) this.save();
  }

  /** Drops `sent` entries whose status reports never came. */
  prune(nowMs = Date.now()): void {
    this.remove(
      this.all()
        .filter((e) => e.phase === 'sent' && nowMs - Date.parse(e.at) > KEEP_SENT_MS)
        .map((e) => e.id),
    );
  }

  private save(): void {
    const temporary = `${this.path}.tmp`;
    const fd = openSync(temporary, 'w');
    try {
      writeSync(fd, JSON.stringify({ submissions: this.all() }));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.path);
  }
}

function now(): string {
  return new Date().toISOString();
}
