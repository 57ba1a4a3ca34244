import type { MoreWaiting, OfferedMessages } from '../../../services/device-core.ts';
import type { EventStreams } from '../../../services/event-stream.ts';

/** What the routes of the mobile API share, at both prefixes. */
export interface MobileContext {
  streams: EventStreams;
  /** Wakes a phone again after its acknowledgements while it has messages never offered. */
  moreWaiting: MoreWaiting;
  /** The messages pulled through this process, so that their snapshots need no ownership statement. */
  offered: OfferedMessages;
}
