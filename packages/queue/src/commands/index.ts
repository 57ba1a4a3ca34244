import { readFileSync } from 'node:fs';

/**
 * The Redis scripts, as `.lua` files next to this one (as bullmq keeps its `src/commands/*.lua`),
 * loaded by name. A line `-- @include <name>` is replaced by that file. The bundles of
 * scripts/build.mjs carry the files' text (`SMSGW_LUA_SCRIPTS`), so that dist/ needs no .lua beside it.
 */
declare const SMSGW_LUA_SCRIPTS: Record<string, string> | undefined;

export type ScriptName = 'pace-take' | 'pace-peek' | 'budget-take' | 'budget-seed' | 'budget-release' | 'budget-peek';

const loaded = new Map<string, string>();

function source(name: string): string {
  const bundled = typeof SMSGW_LUA_SCRIPTS === 'undefined' ? undefined : SMSGW_LUA_SCRIPTS[name];
  return bundled ?? readFileSync(new URL(`./${name}.lua`, import.meta.url), 'utf8');
}

export function luaScript(name: ScriptName): string {
  let script = loaded.get(name);
  if (script === undefined) {
    script = source(name).replace(/^-- @include ([a-z-]+)$/gm, (_, include: string) => source(include));
    loaded.set(name, script);
  }
  return script;
}
