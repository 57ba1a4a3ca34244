/**
 * Just enough PromQL and Prometheus text format to check alert rules and dashboards against the
 * metrics that smsgw serves: which metric names an expression reads, which labels it names, and
 * which of them a live `/metrics` has.
 */

/** What an expression reads: each metric with the labels its matchers name, and the labels it groups or matches on. */
export interface Selectors {
  metrics: Map<string, Set<string>>;
  grouping: Set<string>;
}

// Words that stand for themselves, not a metric: operators, modifiers, literals, and aggregations
// (which may come before their `by (…)`, so not always right before a parenthesis).
const KEYWORDS = new Set(['and', 'or', 'unless', 'atan2', 'bool', 'offset', 'start', 'end', 'inf', 'nan']);
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
// Keywords whose parenthesised list names labels, not series.
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

type Token = { kind: 'ident' | 'matchers' | 'punct' | 'other'; text: string };

/** Tokens of a PromQL expression; strings, numbers, durations, ranges and Grafana variables are `other`. */
function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < expr.length) {
    const c = expr[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "'" || c === '`') {
      i = endOfString(expr, i);
      tokens.push({ kind: 'other', text: 'string' });
    } else if (c === '[') {
      // A range or subquery: durations and Grafana's $__rate_interval.
      i = expr.indexOf(']', i) + 1 || expr.length;
      tokens.push({ kind: 'other', text: 'range' });
    } else if (c === '{') {
      const start = i;
      while (i < expr.length && expr[i] !== '}') i = expr[i] === '"' || expr[i] === "'" || expr[i] === '`' ? endOfString(expr, i) : i + 1;
      tokens.push({ kind: 'matchers', text: expr.slice(start + 1, i) });
      i++;
    } else if (c === '$') {
      // A Grafana variable: $name or ${name}.
      const match = /^\$(\{[^}]*\}|\w+)/.exec(expr.slice(i));
      i += match ? match[0].length : 1;
      tokens.push({ kind: 'other', text: 'variable' });
    } else if (/[0-9.]/.test(c)) {
      const match = /^[0-9.][0-9a-zA-Z.+-]*/.exec(expr.slice(i))!;
      i += match[0].length;
      tokens.push({ kind: 'other', text: 'number' });
    } else if (/[a-zA-Z_:]/.test(c)) {
      const match = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(expr.slice(i))!;
      i += match[0].length;
      tokens.push({ kind: 'ident', text: match[0] });
    } else {
      tokens.push({ kind: 'punct', text: c });
      i++;
    }
  }
  return tokens;
}

function endOfString(expr: string, start: number): number {
  const quote = expr[start];
  let i = start + 1;
  while (i < expr.length && expr[i] !== quote) i += expr[i] === '\\' && quote !== '`' ? 2 : 1;
  return i + 1;
}

/** The label names of a selector's matchers (`a="x", b=~"y"`). */
function matcherLabels(text: string): string[] {
  return [...text.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((m) => m[1]!);
}

/**
 * The metrics an expression reads and the labels it names. A name followed by `(` is a function
 * or an aggregation, never a metric; the lists after by, without, on, ignoring and group_* are labels.
 */
export function selectors(expr: string): Selectors {
  const tokens = tokenize(expr);
  const metrics = new Map<string, Set<string>>();
  const grouping = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const next = tokens[i + 1];
    if (token.kind !== 'ident') continue;
    if (LABEL_LISTS.has(token.text.toLowerCase())) {
      if (next?.text !== '(') continue;
      for (i += 2; i < tokens.length && tokens[i]!.text !== ')'; i++) if (tokens[i]!.kind === 'ident') grouping.add(tokens[i]!.text);
      continue;
    }
    if (next?.text === '(' || KEYWORDS.has(token.text.toLowerCase()) || AGGREGATIONS.has(token.text.toLowerCase())) continue;
    const labels = metrics.get(token.text) ?? new Set<string>();
    if (next?.kind === 'matchers') for (const label of matcherLabels(next.text)) labels.add(label);
    metrics.set(token.text, labels);
  }
  return { metrics, grouping };
}

/** The series a Prometheus scrape of this text would hold: each sample name with the label names it carries. */
export function exposedSeries(text: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s/.exec(line);
    if (!match) continue;
    const labels = series.get(match[1]!) ?? new Set<string>();
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"/g)) labels.add(label[1]!);
    series.set(match[1]!, labels);
  }
  return series;
}

/**
 * The series as Prometheus stores them from a target: with the target's `job` and `instance`
 * labels, a metric's own `job` label renamed `exported_job`; and the `up` series that Prometheus
 * makes itself for each target.
 */
export function scrapedSeries(exposed: Map<string, Set<string>>): Map<string, Set<string>> {
  const scraped = new Map<string, Set<string>>([['up', new Set(['job', 'instance'])]]);
  for (const [name, labels] of exposed) {
    const stored = new Set([...labels].map((label) => (label === 'job' || label === 'instance' ? `exported_${label}` : label)));
    scraped.set(name, new Set([...stored, 'job', 'instance']));
  }
  return scraped;
}

/**
 * What in `expr` the series do not have: a metric that is missing, a label that a matcher names
 * and the metric lacks, a label grouped or matched on that none of the expression's metrics has.
 */
export function missingFrom(expr: string, series: Map<string, Set<string>>): string[] {
  const { metrics, grouping } = selectors(expr);
  const problems: string[] = [];
  for (const [name, labels] of metrics) {
    const has = series.get(name);
    if (!has) {
      problems.push(`metric ${name}`);
      continue;
    }
    for (const label of labels) if (!has.has(label)) problems.push(`label ${label} of ${name}`);
  }
  for (const label of grouping) {
    if (![...metrics.keys()].some((name) => series.get(name)?.has(label))) problems.push(`label ${label} (by/on) of ${[...metrics.keys()].join(', ')}`);
  }
  return problems;
}
