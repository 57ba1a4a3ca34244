import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README and docs/ are the project's manual: every relative link resolves to a file of the
 * repository (and an anchor to a heading of it), and none leaves the repository.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MANUAL = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const heading = !inCode && /^#{1,6}\s+(.*)$/.exec(line);
    if (heading) anchors.add(slug(heading[1]!));
  }
  return anchors;
}

/** Markdown links `[text](target)` outside code blocks and code spans. */
function linksOf(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]!);
}

describe('the manual', () => {
  it.each(MANUAL)('%s: every relative link resolves inside the repository', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const broken: string[] = [];
    for (const link of linksOf(text)) {
      if (/^(https?|mailto):/.test(link)) continue;
      const [path = '', anchor] = link.split('#');
      const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
      if (relative(ROOT, target).startsWith('..')) broken.push(`${link}: outside the repository`);
      else if (!existsSync(target)) broken.push(`${link}: no such file`);
      else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  it('says ./pnpmw, never a bare pnpm command (pnpm is not installed on a fresh machine)', () => {
    const bare = MANUAL.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        .filter(({ line }) => /(^|[\s`'"(])pnpm\s+(?:(?:run|install|exec|test|start|smsgw|bench|add|dlx|modem)\b|db:|-)/.test(line)),
    );
    expect(bare).toEqual([]);
  });
});

describe('slug', () => {
  it.each([
    ['Keeping the app alive', 'keeping-the-app-alive'],
    ['`GET /api/v1/sms`: list', 'get-apiv1sms-list'],
    ['Readiness and health', 'readiness-and-health'],
  ])('%s -> %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });
});
