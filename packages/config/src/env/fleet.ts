import { Type } from 'typebox';
import { Integer } from './integer.ts';

export const SendingEnv = Type.Object({
  MONTHLY_QUOTA_DEFAULT: Integer({
    default: 10000,
    minimum: 0,
    description: 'Messages a user may send per calendar month (UTC) unless the user has a limit of their own.',
  }),
  MAX_RECIPIENTS: Integer({ default: 10000, maximum: 100000, description: 'Most recipients of one send request, after group expansion.' }),
});

/**
 * When a device counts as available, and how long a message handed to a device may stay there
 * (docs/devices.md, "Availability" and "Delivery"). Read by the API and the dispatchers alike.
 */
export const DeviceEnv = Type.Object({
  DEVICE_AVAILABLE_SECONDS: Integer({
    default: 1200,
    description:
      'A device that holds no event stream is available when it made a request within this many seconds (SMS Gate phones without "SSE only" poll every 15 minutes).',
  }),
  DEVICE_HEARTBEAT_SECONDS: Integer({
    default: 15,
    maximum: 300,
    description: "Seconds between keepalives on a device event stream; the stream refreshes the device's availability as often.",
  }),
  DEVICE_STREAM_GRACE_SECONDS: Integer({
    default: 30,
    maximum: 3600,
    description:
      'A device stays available this long after its event stream closed (at least DEVICE_HEARTBEAT_SECONDS, so that a stream it holds on another API process refreshes it in time).',
  }),
  SENDING_LEASE_SECONDS: Integer({
    default: 3600,
    description:
      'A message handed to a device must be sent within this time from the first offer (the phone gets it as validUntil); past it, and the clock skew, it fails unless reported sent. It is never re-sent.',
  }),
  DEVICE_CLOCK_SKEW_SECONDS: Integer({
    default: 300,
    minimum: 0,
    maximum: 3600,
    description: "How long after validUntil smsgw waits for a phone's own report before failing the message (phone clocks drift).",
  }),
  MESSAGE_TTL_SECONDS: Integer({
    default: 86400,
    description: 'A message not handed to a device within this time fails as expired; it is also the latest validUntil.',
  }),
  MAX_QUEUE_SECONDS: Integer({
    default: 36000,
    description:
      'A message not handed to a device within this time from its creation (or its send_at) fails "expired before it could be sent"; a message\'s own valid_until or ttl_seconds replaces it. 10 hours, as Twilio\'s queue.',
  }),
  DEVICE_OFFLINE_AFTER_SECONDS: Integer({
    default: 120,
    minimum: 10,
    maximum: 86400,
    description:
      'A device that gave no sign of life (request, event stream, heartbeat, ping) for this long is announced offline (device.offline webhook); SMS Gate phones are told to ping every half of it.',
  }),
});
