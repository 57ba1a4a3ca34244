/**
 * The types of webhook events (decisions.md, "Webhooks"): those a user may subscribe to, the test
 * event, and the device ping that only SMS Gate-format endpoints take.
 */
export const MESSAGE_EVENT_TYPES = ['message.sent', 'message.delivered', 'message.failed', 'message.cancelled'] as const;
export type MessageEventType = (typeof MESSAGE_EVENT_TYPES)[number];
/** An SMS a device received (real-devices.md §4); its data is the received record. */
export const RECEIVED_EVENT_TYPE = 'message.received';
export const TEST_EVENT_TYPE = 'webhook.test';
/** A device's announced health changed (docs/devices.md, "Alerts"); its data is the device record. */
export const DEVICE_EVENT_TYPES = ['device.offline', 'device.online', 'device.degraded'] as const;
export type DeviceEventType = (typeof DEVICE_EVENT_TYPES)[number];
/**
 * A device reported its health (heartbeat, SMS Gate `system:ping`), at most once per ping interval
 * and endpoint: only SMS Gate-format endpoints take it (their `system:ping`), not smsgw's own API.
 */
export const PING_EVENT_TYPE = 'device.ping';
/** The event types an endpoint may subscribe to. */
export const SUBSCRIBABLE_EVENT_TYPES = [...MESSAGE_EVENT_TYPES, RECEIVED_EVENT_TYPE, ...DEVICE_EVENT_TYPES] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];
export type WebhookEventType = SubscribableEventType | typeof TEST_EVENT_TYPE;
/** Every type of event the engine delivers, to endpoints of any format. */
export type EngineEventType = WebhookEventType | typeof PING_EVENT_TYPE;
