import { ForwardingVenue } from './forwarding-venue.js';

/** A venue without the optional cancel capability (`--no-cancel`), as some live accounts are. */
export class NoCancelVenue extends ForwardingVenue {
  override readonly cancelOrder: undefined = undefined;
}
