import { describe, expect, it } from 'vitest';
import { isRetryableSmsGateError, RETRYABLE_ANDROID_RESULTS } from './send-results.ts';

// The app's texts (MessagesService.kt, resultToErrorMessage, v1.43 to v1.68).
const APP_TEXT: Record<string, string> = {
  RESULT_ERROR_RADIO_OFF: 'RESULT_ERROR_RADIO_OFF (Failed because radio was explicitly turned off)',
  RESULT_ERROR_NO_SERVICE: 'RESULT_ERROR_NO_SERVICE (Failed because service is currently unavailable)',
  RESULT_RADIO_NOT_AVAILABLE: 'RESULT_RADIO_NOT_AVAILABLE (Failed because the radio was not available)',
  RESULT_ERROR_LIMIT_EXCEEDED: 'RESULT_ERROR_LIMIT_EXCEEDED (Failed because we reached the sending queue limit)',
  RESULT_ERROR_NULL_PDU: 'RESULT_ERROR_NULL_PDU (Failed because no PDU provided)',
  RESULT_ERROR_FDN_CHECK_FAILURE: 'RESULT_ERROR_FDN_CHECK_FAILURE (Failed because FDN is enabled)',
};

describe('isRetryableSmsGateError', () => {
  it.each(RETRYABLE_ANDROID_RESULTS)('is true for the app’s "Send result: %s (…)"', (result) => {
    expect(isRetryableSmsGateError(`Send result: ${APP_TEXT[result]}`)).toBe(true);
  });

  it.each([
    ['a generic failure', 'Send result: RESULT_ERROR_GENERIC_FAILURE (Generic failure cause)'],
    ['a network rejection', 'Send result: RESULT_NETWORK_REJECT (Failed because of network rejection)'],
    [
      'a RIL retry failure (the radio may have transmitted)',
      'Send result: RESULT_RIL_SMS_SEND_FAIL_RETRY (The radio failed to send the SMS and needs to retry)',
    ],
    ['a delivery failure', 'Delivery result from SC +4912345: 64'],
    ['an expiry on the phone', 'TTL expired'],
    ['an unknown code', 'Unknown error code: 12345.'],
    ['the name without the app’s prefix', 'RESULT_ERROR_NO_SERVICE'],
    ['no error', undefined],
  ])('is false for %s', (_, error) => {
    expect(isRetryableSmsGateError(error)).toBe(false);
  });
});
