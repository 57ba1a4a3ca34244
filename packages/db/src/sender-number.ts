/**
 * The SQL of the phone number a message is sent from: the number its device reported for the SIM
 * that sends it (the assigned device, else the one named at send; SIM 1 unless another was
 * chosen), null while none is known. Twilio's Message resource shows it as `from` and its status
 * callbacks send it as `From`; both read it here so that they always agree.
 * The arguments are SQL expressions of the message's `device_id`, `requested_device_id` (uuid) and
 * `sim_number` (integer).
 */
export function senderNumberSql(m: { deviceId: string; requestedDeviceId: string; simNumber: string }): string {
  return `(SELECT card->>'phoneNumber'
     FROM devices sender, jsonb_array_elements(CASE WHEN jsonb_typeof(sender.sim_cards) = 'array' THEN sender.sim_cards ELSE '[]' END) card
     WHERE sender.id = coalesce(${m.deviceId}, ${m.requestedDeviceId})
       AND (card->>'simNumber')::int IS NOT DISTINCT FROM coalesce(${m.simNumber}, 1)
     LIMIT 1)`;
}
