/** What a channel is to the queue that drains into it: a name, a length limit and one way to send. */
import type { OutgoingMessage } from './message.js';

export interface Transport {
  /** Names the channel in logs and events (`webhook`, `discord`, `telegram:<chat id>`); never a secret. */
  readonly name: string;
  /** The longest text the channel accepts. */
  readonly maxLength: number;
  /** Resolves once delivered; throws a DeliveryError otherwise. */
  send(message: OutgoingMessage, signal: AbortSignal): Promise<void>;
}
