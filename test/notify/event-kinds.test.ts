/** How the notifier words the happenings a person reads on a phone (event-kinds.ts). */
import { describe, expect, it } from 'vitest';
import { declaredText, type Notice, noticeText } from '../../src/notify/event-kinds.js';
import type { ExitRulesDecl, ProtectionsDecl } from '../../src/strategy/api.js';

const notice = (kind: string, data: Record<string, unknown>, instance = 'grid'): Notice => ({
  source: 'event',
  id: 1,
  key: 'k-e1',
  kind,
  instance,
  time: Date.UTC(2024, 0, 1),
  data,
});

describe('notice texts', () => {
  it('words a reload of exits and protections, never raw JSON', () => {
    const text = noticeText(
      notice('exits-changed', {
        exits: {
          stopLossPct: 2,
          stopLimitPct: 0.5,
          trailingStopPct: 1.5,
          trailingActivationPct: 1,
          roi: { '60': 1, '0': 2 },
        },
        protections: { cooldownMinutes: 30, losingTrades: { count: 3, windowMinutes: 60, pauseMinutes: 120 } },
      }),
    );
    expect(text).toBe(
      'grid exits and protections reloaded: exits: stop-loss 2 % (limit 0.5 % under), trailing stop 1.5 % from +1 %, ' +
        'roi 2 % at once, 1 % after 60 min; protections: cooldown 30 min, 3 losing trades in 60 min pause 120 min',
    );
    expect(noticeText(notice('exits-changed', { exits: {}, protections: {} }))).toBe(
      'grid exits and protections reloaded: exits: none; protections: none',
    );
  });

  it('words a pair list that changed: its pairs, those added and those that left (issue 41)', () => {
    const change = { group: 'trend-usdt', listed: ['BTCUSDT', 'SOLUSDT'], added: ['SOLUSDT'], removed: ['ETHUSDT'] };
    expect(noticeText({ ...notice('pairlist-changed', change), instance: undefined })).toBe(
      'pairlist of trend-usdt: 2 pairs (BTCUSDT, SOLUSDT); added SOLUSDT; left ETHUSDT (no new entries there)',
    );
    expect(noticeText(notice('pairlist-changed', { ...change, listed: [], added: [], removed: ['BTCUSDT'] }))).toMatch(
      /: 0 pairs \(none\); left BTCUSDT \(no new entries there\)$/,
    );
    // A pair the exchange listed after the start that the list does not hold: why, for the operator.
    const newLeftOut = { NEWUSDT: 'no ticker on the market watch', OTHERUSDT: 'its status is BREAK, not TRADING' };
    expect(noticeText(notice('pairlist-changed', { ...change, added: [], removed: [], newLeftOut }))).toMatch(
      /: 2 pairs \(BTCUSDT, SOLUSDT\); newly listed, left out: NEWUSDT \(no ticker on the market watch\), OTHERUSDT \(its status is BREAK, not TRADING\)$/,
    );
  });

  it('says every exit and protection a strategy may declare (a new one does not compile here without a sample)', () => {
    const exits: Required<ExitRulesDecl> = {
      stopLossPct: 2,
      stopLimitPct: 0.5,
      trailingStopPct: 1.5,
      trailingActivationPct: 1,
      roi: { '0': 2 },
    };
    const protections: Required<ProtectionsDecl> = {
      cooldownMinutes: 30,
      losingTrades: { count: 3, windowMinutes: 60, pauseMinutes: 120 },
      maxDrawdown: { pct: 10, windowMinutes: 1440, pauseMinutes: 60 },
    };
    const whole = declaredText(exits, protections);
    const without = (decl: object, key: string) => Object.fromEntries(Object.entries(decl).filter(([k]) => k !== key));
    for (const key of Object.keys(exits))
      expect(declaredText(without(exits, key), protections), `exits.${key}`).not.toBe(whole);
    for (const key of Object.keys(protections))
      expect(declaredText(exits, without(protections, key)), `protections.${key}`).not.toBe(whole);
  });
});
