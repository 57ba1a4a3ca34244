import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The README and docs/ are the project's manual, read in a clone: every link stays inside the
 * repository (the public web only for references), resolves to a file of it, and an anchor to a
 * heading of its target; every doc is linked from the README; commands say ./pnpmw.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const MANUAL = ['README.md', ...DOCS];

/**
 * Pages of the public web the manual may link to: references about things smsgw works with, never
 * material of the project itself. Add a site here only if it is such a reference.
 */
const PUBLIC_REFERENCES = [
  'https://github.com/capcom6/android-sms-gateway',
  'https://sms-gate.app/',
  'https://docs.sms-gate.app/',
  'https://www.standardwebhooks.com/',
  'https://prometheus.io/',
  'https://docs.docker.com/',
  'https://www.postgresql.org/docs/',
  'https://redis.io/docs/',
  'https://nodejs.org/',
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens (links and code marks count as their text). */
function slug(heading: string): string {
  return heading
    .trim()
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown text's headings; a repeated heading gets `-1`, `-2`, … as on GitHub. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let inCode = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) inCode = !inCode;
    const heading = !inCode && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Link targets outside code blocks and code spans: inline links and images, reference definitions, autolinks, HTML hrefs. */
function linksOf(text: string): string[] {
  const prose = text.replace(/^[ \t]*(```|~~~)[\s\S]*?^[ \t]*\1/gm, '').replace(/`[^`\n]*`/g, '');
  return [
    ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/gm)].map((m) => m[1]!),
    ...[...prose.matchAll(/<((?:https?|ftp|file|mailto):[^>\s]+)>/g)].map((m) => m[1]!),
    ...[...prose.matchAll(/\bhref\s*=\s*["']([^"']+)["']/g)].map((m) => m[1]!),
  ];
}

/** What is wrong with one link of `file`, or undefined when it is fine. */
function linkProblem(file: string, link: string): string | undefined {
  if (/^https?:\/\//i.test(link)) {
    return PUBLIC_REFERENCES.some((prefix) => link.startsWith(prefix))
      ? undefined
      : `${link}: leaves the repository (only public references may be linked: PUBLIC_REFERENCES in test/docs/links.test.ts)`;
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(link)) return `${link}: leaves the repository`;
  if (link.startsWith('/')) return `${link}: an absolute path; link relative to the file`;
  const [path = '', anchor] = link.split('#');
  const target = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURIComponent(path));
  const inside = relative(ROOT, target);
  if (inside.startsWith('..') || resolve(ROOT, inside) !== target) return `${link}: outside the repository`;
  if (!existsSync(target)) return `${link}: no such file`;
  if (anchor !== undefined && target.endsWith('.md') && statSync(target).isFile() && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
    return `${link}: no heading with the anchor #${anchor} in ${relative(ROOT, target)}`;
  }
  return undefined;
}

describe('the manual', () => {
  it.each(MANUAL)('%s: every link resolves inside the repository, anchors included', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const problems = linksOf(text).flatMap((link) => linkProblem(file, link) ?? []);
    expect(problems).toEqual([]);
  });

  it.each(MANUAL)('%s: names nothing outside the repository (../shared is not in a clone)', (file) => {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const outside = lines.map((line, i) => ({ where: `${file}:${i + 1}`, line })).filter(({ line }) => /\.\.\/shared\b|(^|[\s(`'"])\.\.\/\.\.\//.test(line));
    expect(outside).toEqual([]);
  });

  it('links every doc of docs/ from the README', () => {
    const linked = new Set(
      linksOf(readFileSync(join(ROOT, 'README.md'), 'utf8'))
        .filter((link) => !/^[a-z][a-z0-9+.-]*:/i.test(link))
        .map((link) => relative(ROOT, resolve(ROOT, decodeURIComponent(link.split('#')[0]!)))),
    );
    expect(DOCS.filter((doc) => !linked.has(doc))).toEqual([]);
  });

  it('says ./pnpmw, never a bare pnpm command (pnpm is not installed on a fresh machine)', () => {
    const bare = MANUAL.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .map((line, i) => ({ where: `${file}:${i + 1}`, line }))
        .filter(({ line }) => /(^|[\s`'"(])pnpm\s+(?:(?:run|install|exec|test|start|smsgw|bench|add|dlx|modem|build|typecheck|prisma)\b|db:|-)/.test(line)),
    );
    expect(bare).toEqual([]);
  });
});

describe('the link checks', () => {
  it.each([
    ['Keeping the app alive', 'keeping-the-app-alive'],
    ['`GET /api/v1/sms`: list', 'get-apiv1sms-list'],
    ['Readiness and health', 'readiness-and-health'],
    ['2. Create a pairing', '2-create-a-pairing'],
    ['3. Set up the app, in this order', '3-set-up-the-app-in-this-order'],
    ['`POST /api/sms/send-template`', 'post-apismssend-template'],
    ['Health, readiness and metrics', 'health-readiness-and-metrics'],
    ['snake_case and [a link](x.md)', 'snake_case-and-a-link'],
  ])('slug(%s) is %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers repeated headings as GitHub does, and ignores headings in code blocks', () => {
    const anchors = anchorsOf('# Webhooks\n## Webhooks\n```\n# not a heading\n```\n### Webhooks\n');
    expect([...anchors]).toEqual(['webhooks', 'webhooks-1', 'webhooks-2']);
  });

  it('finds inline, reference, autolink and HTML links, but none in code', () => {
    const text = 'See [a](docs/a.md#x) and <https://example.org/>.\n[ref]: ../outside.md\n<a href="b.md">b</a>\n`[c](c.md)`\n```\n[d](d.md)\n```\n';
    expect(linksOf(text)).toEqual(['docs/a.md#x', '../outside.md', 'https://example.org/', 'b.md']);
  });

  it('refuses links that leave the repository or miss their target', () => {
    expect(linkProblem('README.md', '../shared/decisions.md')).toMatch(/outside the repository/);
    expect(linkProblem('docs/http-api.md', '../../etc/passwd')).toMatch(/outside the repository/);
    expect(linkProblem('README.md', 'https://example.org/smsgw')).toMatch(/leaves the repository/);
    expect(linkProblem('README.md', 'file:///etc/passwd')).toMatch(/leaves the repository/);
    expect(linkProblem('README.md', '/docs/http-api.md')).toMatch(/absolute path/);
    expect(linkProblem('README.md', 'docs/nothing-here.md')).toMatch(/no such file/);
    expect(linkProblem('README.md', 'docs/http-api.md#no-such-heading')).toMatch(/no heading/);
    expect(linkProblem('docs/http-api.md', '#no-such-heading')).toMatch(/no heading/);
  });

  it('accepts links inside the repository, their anchors, and public references', () => {
    expect(linkProblem('README.md', 'docs/http-api.md#webhooks')).toBeUndefined();
    expect(linkProblem('docs/operations.md', 'devices.md#usb-modems')).toBeUndefined();
    expect(linkProblem('docs/operations.md', '#metrics')).toBeUndefined();
    expect(linkProblem('docs/http-api.md', 'https://www.standardwebhooks.com/')).toBeUndefined();
  });
});
