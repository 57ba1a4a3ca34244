/**
 * Message templates: placeholders are `{{name}}` with names matching `[A-Za-z_][A-Za-z0-9_]*`.
 * `name` and `phone` are reserved (filled per recipient); every other name is a custom variable.
 * Rendering is a single pass, so a value that contains `{{x}}` stays literal.
 */
export const RESERVED_VARIABLES = ['name', 'phone'] as const;

const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;
const ANY_BRACES = /\{\{(.*?)\}\}/gs;

export interface TemplateVariables {
  /** Reserved variables the template uses, in order of first use. */
  reserved: string[];
  /** Custom variables the template uses, in order of first use. */
  custom: string[];
}

/** The placeholders of a template body; `invalid` lists `{{…}}` whose content is not a valid name. */
export function templateVariables(body: string): TemplateVariables & { invalid: string[] } {
  const reserved: string[] = [];
  const custom: string[] = [];
  const invalid: string[] = [];
  for (const match of body.matchAll(ANY_BRACES)) {
    const inner = match[1] ?? '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(inner)) {
      invalid.push(match[0]);
      continue;
    }
    const list = (RESERVED_VARIABLES as readonly string[]).includes(inner) ? reserved : custom;
    if (!list.includes(inner)) list.push(inner);
  }
  return { reserved, custom, invalid };
}

/** The first custom variable of the template (in template order) that `variables` lacks. */
export function firstMissingVariable(body: string, variables: Readonly<Record<string, string>>): string | undefined {
  return templateVariables(body).custom.find((name) => !Object.hasOwn(variables, name));
}

/** Renders for one recipient: reserved values first, then the caller's own variables. */
export function renderTemplate(body: string, values: { name: string; phone: string }, variables: Readonly<Record<string, string>>): string {
  return body.replace(PLACEHOLDER, (whole, key: string) => {
    if (key === 'name') return values.name;
    if (key === 'phone') return values.phone;
    // Own properties only: `{{toString}}` is a missing variable, never Object.prototype.toString.
    return Object.hasOwn(variables, key) ? (variables[key] as string) : whole;
  });
}
