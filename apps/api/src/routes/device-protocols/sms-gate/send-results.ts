/**
 * The SMS Gate app's errors of a refused send (docs/devices.md, "Failover"): which say the message
 * never left the phone, so that the dispatcher may give it to another device.
 */

/**
 * The Android `SmsManager` results that the SMS Gate app reports for a message that never left the
 * phone: the radio was off or had no service, Android's own sending limit refused it, no PDU could
 * be made, or fixed dialling (FDN) blocked the number on this SIM. Each is about this phone, not the
 * recipient, so another phone may send the message.
 */
export const RETRYABLE_ANDROID_RESULTS = [
  'RESULT_ERROR_RADIO_OFF',
  'RESULT_ERROR_NO_SERVICE',
  'RESULT_RADIO_NOT_AVAILABLE',
  'RESULT_ERROR_LIMIT_EXCEEDED',
  'RESULT_ERROR_NULL_PDU',
  'RESULT_ERROR_FDN_CHECK_FAILURE',
] as const;

// The app's error of a refused send (MessagesService.kt, processStateIntent): "Send result: " and
// then the result's name and its meaning in parentheses, the same from v1.43 to v1.68.
const SEND_RESULT = /^Send result: (RESULT_[A-Z_]+) \(/;

/** The Android result an SMS Gate error text names (undefined: not a refused send). */
function androidSendResult(error: string | undefined | null): string | undefined {
  return error ? SEND_RESULT.exec(error)?.[1] : undefined;
}

/** Whether an SMS Gate phone's error says the message never left the phone. */
export function isRetryableSmsGateError(error: string | undefined | null): boolean {
  const result = androidSendResult(error);
  return result !== undefined && (RETRYABLE_ANDROID_RESULTS as readonly string[]).includes(result);
}
