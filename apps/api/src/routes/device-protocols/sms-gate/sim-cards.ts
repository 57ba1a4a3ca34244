import { storableText } from '@smsgw/core';

/** The SIM cards an SMS Gate phone reports, as smsgw stores them. */

const SIM_FIELDS = ['phoneNumber', 'carrierName', 'iccid'] as const;
const SIM_NUMBERS = ['slotIndex', 'simNumber'] as const;

/**
 * The SIM cards as the app reported them, reduced to the fields it sends (at most 8 cards, short
 * strings, no U+0000 nor lone surrogate that Postgres could not store); undefined when it sent none
 * or nothing usable.
 */
export function storableSimCards(value: unknown): Record<string, string | number>[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value
    .filter((card): card is Record<string, unknown> => typeof card === 'object' && card !== null && !Array.isArray(card))
    .slice(0, 8)
    .map((card) => {
      const kept: Record<string, string | number> = {};
      for (const key of SIM_NUMBERS) if (Number.isSafeInteger(card[key])) kept[key] = card[key] as number;
      // Cut before making it storable: a cut between the two halves of a surrogate pair leaves a lone one.
      for (const key of SIM_FIELDS) if (typeof card[key] === 'string') kept[key] = storableText(card[key].slice(0, 64));
      return kept;
    });
}
