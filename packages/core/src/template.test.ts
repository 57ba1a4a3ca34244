import { describe, expect, it } from 'vitest';
import { RESERVED_VARIABLES, firstMissingVariable, renderTemplate, templateVariables } from './template.ts';

describe('templateVariables', () => {
  it('reserves exactly name and phone', () => {
    expect([...RESERVED_VARIABLES]).toEqual(['name', 'phone']);
  });

  it('splits reserved and custom names, each in order of first use and without repeats', () => {
    const body = 'Hi {{name}}, code {{code}} for {{phone}}; {{b_2}} {{code}} {{name}} {{A}} {{_x}} {{phone}}';
    expect(templateVariables(body)).toEqual({ reserved: ['name', 'phone'], custom: ['code', 'b_2', 'A', '_x'], invalid: [] });
  });

  it('lists reserved names in the order the template first uses them', () => {
    expect(templateVariables('{{phone}} then {{name}}').reserved).toEqual(['phone', 'name']);
  });

  it('finds no variables in a text without placeholders or with single braces', () => {
    expect(templateVariables('plain {name} text { {x} }')).toEqual({ reserved: [], custom: [], invalid: [] });
  });

  it.each([
    ['a leading digit', '{{1x}}'],
    ['spaces around the name', '{{ name }}'],
    ['a hyphen', '{{a-b}}'],
    ['nothing inside', '{{}}'],
    ['a dot', '{{a.b}}'],
    ['a line break', '{{a\nb}}'],
  ])('reports a placeholder with %s as invalid, and not as a variable', (_what, placeholder) => {
    expect(templateVariables(`Hello ${placeholder} {{ok}}`)).toEqual({ reserved: [], custom: ['ok'], invalid: [placeholder] });
  });

  it('treats names as case-sensitive: {{Name}} is custom, not the reserved name', () => {
    expect(templateVariables('{{Name}} {{PHONE}}')).toEqual({ reserved: [], custom: ['Name', 'PHONE'], invalid: [] });
  });
});

describe('renderTemplate', () => {
  const recipient = { name: 'Ada', phone: '+15550001111' };

  it('fills reserved values and custom variables, every occurrence', () => {
    expect(renderTemplate('{{name}} ({{phone}}): {{code}} / {{code}}', recipient, { code: '42' })).toBe('Ada (+15550001111): 42 / 42');
  });

  it('renders in a single pass: a value containing {{phone}} or {{code}} stays literal', () => {
    expect(renderTemplate('A {{x}} B {{name}}', { name: '{{code}}', phone: '+15550001111' }, { x: '{{phone}}', code: 'no' })).toBe('A {{phone}} B {{code}}');
  });

  it('takes the reserved values over variables with the same names', () => {
    expect(renderTemplate('{{name}} {{phone}}', recipient, { name: 'Other', phone: '+19999999999' })).toBe('Ada +15550001111');
  });

  it('leaves a placeholder with no value, and invalid placeholders, as written', () => {
    expect(renderTemplate('{{missing}} {{ name }} {{1x}}', recipient, {})).toBe('{{missing}} {{ name }} {{1x}}');
  });

  it('uses own properties only: {{toString}}, {{constructor}}, {{hasOwnProperty}} are not taken from Object.prototype', () => {
    expect(renderTemplate('{{toString}}|{{constructor}}|{{hasOwnProperty}}', recipient, {})).toBe('{{toString}}|{{constructor}}|{{hasOwnProperty}}');
  });

  it('uses {{toString}}, {{constructor}} and {{__proto__}} when the caller gives them as own properties', () => {
    const variables = JSON.parse('{"toString":"T","constructor":"C","__proto__":"P"}') as Record<string, string>;
    expect(renderTemplate('{{toString}} {{constructor}} {{__proto__}}', recipient, variables)).toBe('T C P');
  });

  it('does not read {{__proto__}} from a plain object that lacks it', () => {
    expect(renderTemplate('{{__proto__}}', recipient, {})).toBe('{{__proto__}}');
  });

  it('inserts values verbatim, including $ patterns that String.replace would otherwise interpret', () => {
    expect(renderTemplate('{{a}}', recipient, { a: "$& $1 $$ $` $'" })).toBe("$& $1 $$ $` $'");
  });
});

describe('firstMissingVariable', () => {
  it('returns the first custom variable absent from variables, in template order', () => {
    expect(firstMissingVariable('{{a}} {{code}} {{b}} {{z}}', { a: '1', z: '2' })).toBe('code');
  });

  it('ignores reserved names, extra variables and invalid placeholders', () => {
    expect(firstMissingVariable('{{name}} {{phone}} {{ x }} {{1x}} {{a}}', { a: '1', extra: 'e' })).toBeUndefined();
  });

  it('accepts an empty string as a given value', () => {
    expect(firstMissingVariable('{{a}}', { a: '' })).toBeUndefined();
  });

  it.each(['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf'])('reports {{%s}} missing unless it is an own property', (key) => {
    expect(firstMissingVariable(`x {{${key}}}`, {})).toBe(key);
    expect(firstMissingVariable(`x {{${key}}}`, JSON.parse(`{"${key}":"v"}`) as Record<string, string>)).toBeUndefined();
  });
});
