import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';

const INTEGER = /^-?\d+$/;
const NUMBER = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * Converts text (environment variables, query strings, path parameters) to the types of `schema`
 * like TypeBox's `Value.Convert`, except that a number must be written in decimal: `Value.Convert`
 * reads "80.5" as the integer 80, "true" as 1 and "0x50" as 80, which would let a wrong value pass.
 * A property that is not plain decimal keeps its text, so the schema check refuses it.
 */
export function convertText(schema: TSchema, value: unknown): unknown {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  // Value.Convert may convert in place, so the texts are kept aside first.
  const texts = properties && typeof value === 'object' && value !== null ? { ...(value as Record<string, unknown>) } : undefined;
  const converted = Value.Convert(schema, value);
  if (!properties || !texts || typeof converted !== 'object' || converted === null) return converted;
  const result = converted as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    const text = texts[name];
    if (typeof text !== 'string') continue;
    if ((property.type === 'integer' && !INTEGER.test(text)) || (property.type === 'number' && !NUMBER.test(text))) result[name] = text;
  }
  return result;
}
