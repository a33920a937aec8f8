/**
 * One contract suite, many notification transports (as test/venues/venue-contract.ts is for venues): the
 * cases every Transport must pass, registered with vitest by `runTransportContract`. The webhook, Discord and
 * Telegram transports run them in transports.test.ts, each against a local stand-in of its receiver.
 *
 * What a harness provides: a transport whose receiver answers as told by `answer` (in the receiver's own
 * wire form: a webhook's Retry-After header, Discord's `retry_after` body, Telegram's `parameters`), what
 * the receiver was given (`delivered`), the secrets that must never show (token, URL, signing secret), a
 * transport of the same kind whose receiver is not listening, and a `close`. Its timeout is 300 ms.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Notice } from '../../src/notify/event-kinds.js';
import { BotError } from '../../src/errors.js';
import { DeliveryError } from '../../src/notify/http-post.js';
import { composeMessage, type OutgoingMessage } from '../../src/notify/message.js';
import type { Transport } from '../../src/notify/transport.js';

/** How the receiver answers the next sends: delivered; busy (5xx); slow down (429, wait 1 s); refused (4xx); no answer. */
export type Answer = 'ok' | 'busy' | 'slow-down' | 'refused' | 'hold';

export interface TransportHarness {
  transport: Transport;
  answer(next: Answer): void;
  /** The texts the receiver took, in order. */
  delivered(): string[];
  /** What no request error or name may contain. */
  secrets: readonly string[];
  /** The same kind of transport, to an address where nothing listens. */
  unreachable(): Transport;
  close(): Promise<void>;
}

export const CONTRACT_TIMEOUT_MS = 300;

let nextId = 1;
function notice(text: string): Notice {
  const id = nextId++;
  return {
    source: 'event',
    id,
    key: `contract-e${id}`,
    kind: 'paused',
    instance: 'grid',
    time: 0,
    data: { reason: text },
  };
}

async function failure(promise: Promise<unknown>): Promise<DeliveryError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'expected the send to fail with a DeliveryError').toBeInstanceOf(DeliveryError);
  // One of the bot's errors: describeError and the logs give it its stable code.
  expect(err).toBeInstanceOf(BotError);
  expect((err as DeliveryError).code).toBe('E_NOTIFY_DELIVERY');
  return err as DeliveryError;
}

export function runTransportContract(kind: string, makeHarness: () => Promise<TransportHarness>): void {
  describe(`Transport contract: ${kind}`, () => {
    let h: TransportHarness;
    const never = new AbortController().signal;
    const message = (text: string, maxLength = h.transport.maxLength): OutgoingMessage =>
      composeMessage([notice(text)], 'live', maxLength);
    const noSecretIn = (text: string) => {
      for (const s of h.secrets) expect(text).not.toContain(s);
    };

    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => {
      await h.close();
    });

    it('has a name that says the channel and holds no secret, and a length limit', () => {
      expect(h.transport.name).toMatch(/^(webhook|discord|telegram:-?\d+)$/);
      noSecretIn(h.transport.name);
      expect(h.transport.maxLength).toBeGreaterThanOrEqual(2000);
    });

    it('delivers the text intact, in order, up to its length limit', async () => {
      await h.transport.send(message('first'), never);
      await h.transport.send(message('second · ünïcødé ‼ "quoted" \\ back'), never);
      const long = message('x'.repeat(10_000));
      expect(long.text.length).toBe(h.transport.maxLength);
      await h.transport.send(long, never);
      const got = h.delivered();
      expect(got).toHaveLength(3);
      expect(got[0]).toBe('LIVE · ‼ grid PAUSED: first');
      expect(got[1]).toBe('LIVE · ‼ grid PAUSED: second · ünïcødé ‼ "quoted" \\ back');
      expect(got[2]).toBe(long.text);
    });

    it('fails a 5xx as worth retrying, and a 429 with the wait the receiver asked for', async () => {
      h.answer('busy');
      const busy = await failure(h.transport.send(message('a'), never));
      expect(busy).toMatchObject({ permanent: false, retryAfterMs: undefined });
      h.answer('slow-down');
      const slow = await failure(h.transport.send(message('b'), never));
      expect(slow).toMatchObject({ permanent: false, retryAfterMs: 1000 });
      expect(h.delivered()).toEqual([]);
      for (const e of [busy, slow]) {
        expect(e.message.startsWith(h.transport.name.split(':')[0] as string)).toBe(true);
        noSecretIn(e.message);
      }
    });

    it('fails a 4xx that a retry cannot heal as permanent', async () => {
      h.answer('refused');
      const refused = await failure(h.transport.send(message('c'), never));
      expect(refused.permanent).toBe(true);
      noSecretIn(refused.message);
    });

    it('fails a receiver that does not listen, or does not answer in time, as worth retrying, naming no secret', async () => {
      const down = await failure(h.unreachable().send(message('d'), never));
      expect(down.permanent).toBe(false);
      noSecretIn(down.message);
      h.answer('hold');
      const started = Date.now();
      const late = await failure(h.transport.send(message('e'), never));
      expect(late.permanent).toBe(false);
      // Bounded by the timeout (generously: this is not a timing figure, only "it does not hang").
      expect(Date.now() - started).toBeLessThan(CONTRACT_TIMEOUT_MS + 5000);
      noSecretIn(late.message);
    });

    it('gives up at once when its signal aborts (the daemon stopping)', async () => {
      h.answer('hold');
      const stop = new AbortController();
      const sending = h.transport.send(message('f'), stop.signal);
      setTimeout(() => stop.abort(), 20);
      const aborted = await failure(sending);
      noSecretIn(aborted.message);
    });
  });
}
