import type { Final } from './at-lines.ts';

/** The common `+CMS ERROR` codes of 3GPP 27.005 §3.2.5 (and the network's causes of 24.011 below 128). */
const CMS_ERRORS: Record<number, string> = {
  1: 'unassigned (unallocated) number',
  8: 'operator determined barring',
  10: 'call barred',
  21: 'short message transfer rejected',
  27: 'destination out of service',
  28: 'unidentified subscriber',
  29: 'facility rejected',
  30: 'unknown subscriber',
  38: 'network out of order',
  41: 'temporary failure',
  42: 'congestion',
  47: 'resources unavailable',
  50: 'requested facility not subscribed',
  69: 'requested facility not implemented',
  81: 'invalid short message transfer reference value',
  95: 'invalid message, unspecified',
  96: 'invalid mandatory information',
  97: 'message type non-existent or not implemented',
  98: 'message not compatible with short message protocol state',
  99: 'information element non-existent or not implemented',
  111: 'protocol error, unspecified',
  127: 'interworking, unspecified',
  128: 'telematic interworking not supported',
  143: 'unsupported message class',
  159: 'unspecified TP-DCS error',
  175: 'unspecified TP-command error',
  176: 'TPDU not supported',
  192: 'SC busy',
  193: 'no SC subscription',
  194: 'SC system failure',
  195: 'invalid SME address',
  196: 'destination SME barred',
  197: 'SM rejected: duplicate SM',
  300: 'ME failure',
  301: 'SMS service of ME reserved',
  302: 'operation not allowed',
  303: 'operation not supported',
  304: 'invalid PDU mode parameter',
  305: 'invalid text mode parameter',
  310: 'SIM not inserted',
  311: 'SIM PIN required',
  312: 'PH-SIM PIN required',
  313: 'SIM failure',
  314: 'SIM busy',
  315: 'SIM wrong',
  316: 'SIM PUK required',
  317: 'SIM PIN2 required',
  318: 'SIM PUK2 required',
  320: 'memory failure',
  321: 'invalid memory index',
  322: 'memory full',
  330: 'SMSC address unknown',
  331: 'no network service',
  332: 'network timeout',
  340: 'no +CNMA acknowledgement expected',
  500: 'unknown error',
};

/** The common `+CME ERROR` codes of 3GPP 27.007 §9.2. */
const CME_ERRORS: Record<number, string> = {
  3: 'operation not allowed',
  4: 'operation not supported',
  10: 'SIM not inserted',
  11: 'SIM PIN required',
  12: 'SIM PUK required',
  13: 'SIM failure',
  14: 'SIM busy',
  15: 'SIM wrong',
  16: 'incorrect password',
  30: 'no network service',
  31: 'network timeout',
  100: 'unknown',
};

/** A final result in words: `+CMS ERROR: 38` → "network out of order (+CMS ERROR: 38)". */
export function describeFinal(final: Final): string {
  if (final.kind === 'ok') return 'OK';
  if (final.kind === 'error') return 'the modem answered ERROR';
  const table = final.kind === 'cms' ? CMS_ERRORS : CME_ERRORS;
  const label = `+${final.kind.toUpperCase()} ERROR: ${final.text}`;
  const meaning = final.code >= 0 ? table[final.code] : final.text;
  return meaning ? `${meaning} (${label})` : label;
}

/**
 * TP-Status of a status report (3GPP 23.040 §9.2.3.15): `delivered` (the transaction is
 * complete), `pending` (the service centre still tries), or `failed` with the reason in words.
 */
export function describeStatus(status: number): { outcome: 'delivered' | 'pending' | 'failed'; text: string } {
  const known: Record<number, string> = {
    0x00: 'received by the recipient',
    0x01: 'forwarded, delivery not confirmed',
    0x02: 'replaced by the service centre',
    0x20: 'congestion, still trying',
    0x21: 'recipient busy, still trying',
    0x22: 'no response from the recipient, still trying',
    0x23: 'service rejected, still trying',
    0x24: 'quality of service not available, still trying',
    0x25: 'error in the recipient, still trying',
    0x40: 'remote procedure error',
    0x41: 'incompatible destination',
    0x42: 'connection rejected by the recipient',
    0x43: 'not obtainable',
    0x44: 'quality of service not available',
    0x45: 'no interworking available',
    0x46: 'validity period expired',
    0x47: 'deleted by the sender',
    0x48: 'deleted by the service centre administration',
    0x49: 'the message does not exist',
    0x60: 'congestion',
    0x61: 'recipient busy',
    0x62: 'no response from the recipient',
    0x63: 'service rejected',
    0x64: 'quality of service not available',
    0x65: 'error in the recipient',
  };
  const hex = `0x${status.toString(16).padStart(2, '0')}`;
  const text = `${known[status] ?? 'unknown status'} (status report ${hex})`;
  if (status <= 0x1f) return { outcome: 'delivered', text };
  if (status <= 0x3f) return { outcome: 'pending', text };
  return { outcome: 'failed', text: `Not delivered: ${text}` };
}
