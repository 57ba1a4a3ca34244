/**
 * What the owner of a phone does with a pairing (docs/devices.md, "Pairing a phone"), in the words
 * of the SMS Gate app's screens. "SSE only" comes first: a phone that registers with Google push
 * never opens the event stream (real-devices.md §2b.2), and a phone registered before re-enrols
 * only through "Private token" and a restart (§2b.1).
 */
export interface PairingShown {
  code: string;
  token: string;
  expiresAt: Date;
  mobileUrl: string;
}

export function pairingSteps(pairing: PairingShown): string[] {
  const https = pairing.mobileUrl.startsWith('https://');
  return [
    `Install SMS Gate (capcom6/android-sms-gateway, v1.53.1 or later) from its GitHub releases: ${
      https ? 'app-release.apk' : 'app-insecure.apk (this URL is plain http://, which app-release.apk refuses)'
    }.`,
    'Before pairing, in the app: Settings → Cloud server… → Notification channel: "SSE Only".',
    `Settings → Cloud server… → API URL: ${pairing.mobileUrl}`,
    `Home: switch on "Cloud server", start the app ("Offline" button), choose "By Code", type ${pairing.code} and Continue (valid until ${pairing.expiresAt.toISOString()}).`,
    `A phone registered before (revoked, or moved from another server): put ${pairing.token} in Settings → Cloud server… → Private Token and restart the app.`,
    'Settings → Battery optimization: turn it off for the app. More: docs/devices.md.',
  ];
}
