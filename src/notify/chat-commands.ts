/**
 * Telegram chat commands: long-polls `getUpdates` and answers only the configured chats. Reads and actions go
 * through the operator layer (src/operator/), the same queries and actions as the control API.
 * A message from any other chat is ignored and logged once per chat; a command sent before the daemon started
 * (while it was down) is not acted on, and is answered with why. Polling failures are retried with backoff
 * and logged once per outage: commands never stop the daemon.
 */
import type { Logger } from '../ops/logger.js';
import { type Dec, dec } from '../market/decimal.js';
import { type ActionResult, OperatorError } from '../operator/actions.js';
import type { Operator } from '../operator/operator.js';
import type { PerformanceRow } from '../operator/queries.js';
import { instanceGroup } from '../market/instance-names.js';
import type { InstanceGroup } from '../status/instance-groups.js';
import { guardLines, instanceRounder, type RulesOf, totalRounder } from '../status/status-view.js';
import type { Mode } from './message.js';
import type { ChatMessage, TelegramApi } from './telegram.js';
import type { Timers } from '../ports/clock.js';

export const HELP = [
  '/status: daemon, guards and instances',
  '/balance: the account balances',
  '/pnl: PnL per instance (today, total, open)',
  '/trades [N]: the last N closed trades (10)',
  '/profit: closed trades per quote asset (count, won, PnL)',
  '/daily [N], /weekly [N], /monthly [N]: profit per period (UTC), the last N (7, 4, 3)',
  '/performance: closed trades by pair and by exit reason',
  '/count: the trades open now (against maxOpenTrades when set)',
  '/logs [N]: the last N warnings and errors (10)',
  '/pause NAME: pause an instance (its open orders stay)',
  '/resume NAME: resume a paused instance',
  '/exit NAME [PRICE]: pause, cancel its orders, sell its position (MARKET, or LIMIT at PRICE)',
  '/forcebuy NAME [PRICE|market] [AMOUNT]: open a position now (MARKET, or LIMIT at PRICE; AMOUNT of the quote, default params.quoteAmount), through every brake',
  '/stopbuy: stop-buy on (no new BUY orders; exits still go out)',
  '/startbuy: stop-buy off',
  '/killswitch on|off: the kill switch (no new orders at all)',
  '/reload: reload the strategy files (params, risk, exits, protections)',
  '/version: the build that runs',
  '/help: this list',
].join('\n');

/** What the chat commands use of the operator layer. */
export type ChatOperator = Pick<Operator, 'act' | 'build'> & {
  read: Pick<
    Operator['read'],
    'status' | 'balances' | 'invalidate' | 'trades' | 'profit' | 'profitTotals' | 'performance' | 'openTrades' | 'logs'
  >;
};

/** Characters of /logs' lines at most (a Telegram message holds 4,096). */
const LOGS_TEXT_MAX = 3500;

/** Distinct unknown chats remembered (to log each once) at most. */
const MAX_STRANGERS = 1000;

/** The optional count argument of a command: `fallback` when absent, undefined when not 1..max. */
function count(arg: string | undefined, fallback: number, max: number): number | undefined {
  if (arg === undefined) return fallback;
  const n = Number(arg);
  return Number.isInteger(n) && n >= 1 && n <= max ? n : undefined;
}

/** A duration for a phone: `45s`, `12m`, `3h 5m`, `2d 4h`. */
function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** A figure with its sign, as `round` writes it (its pair's precision). */
const signed = (d: Dec, round: (d: Dec) => string): string => {
  const text = round(d);
  return text.startsWith('-') || d.isNeg() ? text : `+${text}`;
};

/** A multi-pair file's totals, one line per quote asset. */
function groupLines(group: InstanceGroup, rules: RulesOf): string[] {
  return group.totals.map((t) => {
    const q = totalRounder(group, t, rules);
    const inQuote = (d: Dec) => `${signed(d, q)} ${t.quoteAsset}`;
    const exposure = t.exposure === undefined ? '?' : q(t.exposure);
    return `${group.name}: ${t.running}/${t.pairs} running · ${t.openTrades} held · exposure ${exposure} ${t.quoteAsset} · ${t.openOrders} open · today ${inQuote(t.realisedToday)} · open PnL ${inQuote(t.unrealisedPnl)}`;
  });
}

export class ChatCommands {
  private offset: number | undefined;
  private readonly strangers = new Set<string>();
  private readonly stop$ = new AbortController();
  private loop: Promise<void> | undefined;
  private failing = false;
  private readonly startedAt: number;

  constructor(
    private readonly deps: {
      api: TelegramApi;
      chatIds: ReadonlySet<string>;
      operator: ChatOperator;
      mode: Mode;
      logger: Logger;
      timers: Timers;
      /** Sends a reply to a chat (through that chat's rate limit). */
      reply: (chatId: string, text: string) => Promise<void>;
      /** Seconds a getUpdates call waits for a message (long polling). */
      waitSeconds?: number;
      /** When the daemon started (default: now); a command sent before it is not acted on. */
      startedAt?: number;
    },
  ) {
    // Telegram dates messages in whole seconds: a command of the start's own second counts as after it.
    this.startedAt = Math.floor((deps.startedAt ?? deps.timers.now()) / 1000) * 1000;
  }

  start(): void {
    this.loop ??= this.run().catch((err: unknown) => this.deps.logger.error({ err }, 'telegram commands stopped'));
  }

  async stop(): Promise<void> {
    this.stop$.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { api, logger, timers } = this.deps;
    let failures = 0;
    while (!this.stop$.signal.aborted) {
      let messages: ChatMessage[];
      try {
        const got = await api.getUpdates(this.offset, this.deps.waitSeconds ?? 25, this.stop$.signal);
        this.offset = got.nextOffset;
        messages = got.messages;
        if (this.failing) logger.info('telegram commands: getUpdates answers again');
        this.failing = false;
        failures = 0;
      } catch (err) {
        if (this.stop$.signal.aborted) return;
        failures++;
        if (!this.failing)
          logger.warn(
            { err: err instanceof Error ? err.message : String(err) },
            'telegram commands: getUpdates failed; retrying with backoff',
          );
        this.failing = true;
        await timers.sleep(Math.min(60_000, 1000 * 2 ** Math.min(failures - 1, 6)), this.stop$.signal);
        continue;
      }
      for (const m of messages) {
        const answer = await this.handle(m);
        if (answer === undefined) continue;
        await this.deps
          .reply(m.chatId, answer)
          .catch((err: unknown) =>
            logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'telegram: a reply failed'),
          );
      }
    }
  }

  /** The answer to one message, or undefined when it is not answered (another chat, stale, not a command). */
  async handle(m: ChatMessage): Promise<string | undefined> {
    const { chatIds, logger } = this.deps;
    if (!chatIds.has(m.chatId)) {
      if (!this.strangers.has(m.chatId) && this.strangers.size < MAX_STRANGERS) {
        this.strangers.add(m.chatId);
        logger.warn(
          { chatId: m.chatId },
          `telegram: ignoring messages from chat ${m.chatId} (not in TELEGRAM_CHAT_ID)`,
        );
      }
      return undefined;
    }
    const [word = '', ...args] = m.text.trim().split(/\s+/);
    if (!word.startsWith('/')) return undefined;
    const command = (word.slice(1).split('@')[0] ?? '').toLowerCase();
    if (m.time < this.startedAt) {
      logger.info(
        { chatId: m.chatId, command },
        `telegram: /${command} was sent before the daemon started: not acted on`,
      );
      const at = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
      return this.tagged(
        `/${command} not acted on`,
        `it was sent at ${at(m.time)}, before this daemon started (${at(this.startedAt)}). Send it again if you still mean it.`,
      );
    }
    const by = { source: `telegram:${m.chatId}` };
    logger.info({ chatId: m.chatId, command }, `telegram command /${command}`);
    try {
      return await this.command(command, args, by);
    } catch (err) {
      logger.error({ err, command }, `telegram command /${command} failed`);
      return this.tagged(`/${command} failed`, err instanceof Error ? err.message : String(err));
    }
  }

  /** Runs one command of a configured chat: its answer. */
  private async command(command: string, args: string[], by: { source: string }): Promise<string | undefined> {
    const { operator } = this.deps;
    switch (command) {
      case 'status':
        return this.tagged('status', this.statusText());
      case 'trades': {
        const n = count(args[0], 10, 50);
        if (n === undefined) return this.tagged('/trades [N]', 'N: expected a whole number from 1 to 50');
        return this.tagged(`last ${n} closed trades`, this.tradesText(n));
      }
      case 'profit':
        return this.tagged('profit of closed trades', this.profitText());
      case 'daily':
      case 'weekly':
      case 'monthly': {
        const period = ({ daily: 'day', weekly: 'week', monthly: 'month' } as const)[command];
        const n = count(args[0], { day: 7, week: 4, month: 3 }[period], 60);
        if (n === undefined) return this.tagged(`/${command} [N]`, 'N: expected a whole number from 1 to 60');
        return this.tagged(`${command} profit (UTC)`, this.periodText(period, n));
      }
      case 'pnl':
        return this.tagged('PnL (today · total · open)', this.pnlText());
      case 'performance':
        return this.tagged('performance of closed trades', this.performanceText());
      case 'count':
        return this.tagged(this.countTitle(), this.countText());
      case 'logs': {
        const n = count(args[0], 10, 50);
        if (n === undefined) return this.tagged('/logs [N]', 'N: expected a whole number from 1 to 50');
        return this.tagged(`last ${n} warnings and errors (wall clock, UTC)`, this.logsText(n));
      }
      case 'balance':
      case 'balances':
        return this.tagged('balances', this.balanceText());
      case 'pause':
      case 'resume':
      case 'exit': {
        const name = args[0];
        if (name === undefined)
          return this.tagged(`/${command} NAME${command === 'exit' ? ' [PRICE]' : ''}`, `instances: ${this.names()}`);
        if (command === 'pause') return this.result(name, () => operator.act.pauseInstance(name, by));
        if (command === 'resume') return this.result(name, () => operator.act.resumeInstance(name, by));
        const price = args[1];
        if (price !== undefined && !/^\d+(\.\d+)?$/.test(price))
          return this.tagged(`/exit ${name} ${price}`, 'PRICE: expected a positive decimal, like 20150.5');
        return this.result(`exit ${name}:`, () =>
          operator.act.exitPosition(
            name,
            price === undefined ? { type: 'MARKET' } : { type: 'LIMIT', price: dec(price) },
            by,
          ),
        );
      }
      case 'forcebuy':
      case 'forceentry': {
        const [name, price = 'market', amount] = args;
        const usage = '/forcebuy NAME [PRICE|market] [AMOUNT]';
        if (name === undefined) return this.tagged(usage, `instances: ${this.names()}`);
        const decimal = /^\d+(\.\d+)?$/;
        if (price !== 'market' && !decimal.test(price))
          return this.tagged(usage, `PRICE: expected market or a positive decimal, like 20150.5; got ${price}`);
        if (amount !== undefined && !decimal.test(amount))
          return this.tagged(usage, `AMOUNT: expected a positive decimal of the quote asset, like 50; got ${amount}`);
        return this.result(`force entry ${name}:`, () =>
          operator.act.forceEntry(
            name,
            price === 'market' ? { type: 'MARKET' } : { type: 'LIMIT', price: dec(price) },
            amount === undefined ? undefined : dec(amount),
            by,
          ),
        );
      }
      case 'stopbuy':
      case 'startbuy':
        return this.result('stop-buy', () => operator.act.setStopBuy(command === 'stopbuy', by));
      case 'killswitch': {
        const on = args[0]?.toLowerCase();
        if (on !== 'on' && on !== 'off') return this.tagged('/killswitch on|off', '');
        return this.result('kill switch', () => operator.act.setKillSwitch(on === 'on', by));
      }
      case 'reload':
        return this.result('reload:', () => operator.act.reloadStrategyFiles(by));
      case 'version':
        return this.tagged(
          'version',
          `${operator.build.version}${operator.build.revision === undefined ? '' : ` (commit ${operator.build.revision.slice(0, 12)})`}`,
        );
      case 'help':
      case 'start':
        return this.tagged('commands', HELP);
      default:
        return this.tagged(`unknown command /${command}`, HELP);
    }
  }

  private tagged(title: string, body: string): string {
    return `${this.deps.mode === 'live' ? 'LIVE' : 'PAPER'} · ${title}${body === '' ? '' : `\n${body}`}`;
  }

  /** An action's answer in words: what it did, or why it was refused (an operator's refusal is an answer). */
  private async result(subject: string, action: () => Promise<ActionResult>): Promise<string> {
    try {
      const r = await action();
      this.deps.operator.read.invalidate();
      return this.tagged(`${subject} ${r.outcome}`, '');
    } catch (err) {
      if (err instanceof OperatorError) {
        const problems = err.problems.length > 0 ? err.problems.join('\n') : '';
        return this.tagged(`refused: ${err.message}`, problems);
      }
      throw err;
    }
  }

  private names(): string {
    return this.deps.operator.read
      .status()
      .view.report.instances.map((i) => i.instance)
      .join(', ');
  }

  private tradesText(n: number): string {
    const { items } = this.deps.operator.read.trades({ limit: n });
    if (items.length === 0) return 'no closed trades yet';
    return items
      .map((t) =>
        [
          `#${t.id} ${t.instance} ${t.symbol} ${t.direction} ${t.quantity}`,
          `${t.entryPrice} → ${t.exitPrice}`,
          `${t.pnl.startsWith('-') ? '' : '+'}${t.pnl} ${t.quoteAsset ?? ''}`.trim() +
            (t.pnlPct === null ? '' : ` (${t.pnlPct.startsWith('-') ? '' : '+'}${t.pnlPct}%)`),
          duration(t.durationMs),
          t.entryTag !== null || t.exitTag !== null ? `[${t.entryTag ?? '-'} → ${t.exitTag ?? '-'}]` : '',
        ]
          .filter((p) => p !== '')
          .join(' · '),
      )
      .join('\n');
  }

  private profitText(): string {
    const totals = this.deps.operator.read.profitTotals();
    if (totals.length === 0) return 'no closed trades yet';
    return totals
      .map(
        (t) =>
          `${t.quoteAsset}: ${t.pnl.startsWith('-') ? '' : '+'}${t.pnl} · ${t.trades} trades · ${t.winRatePct ?? '-'}% won` +
          (t.profitFactor === null ? '' : ` · profit factor ${t.profitFactor}`),
      )
      .join('\n');
  }

  private periodText(period: 'day' | 'week' | 'month', n: number): string {
    const rows = this.deps.operator.read.profit(period, n);
    if (rows.length === 0) return 'no closed trades yet';
    return rows
      .map(
        (r) =>
          `${r.period} ${r.quoteAsset} ${r.pnl.startsWith('-') ? '' : '+'}${r.pnl} · ${r.trades} trades · ${r.winRatePct ?? '-'}% won · fees ${r.fees}`,
      )
      .join('\n');
  }

  private performanceText(): string {
    const { pairs, exitReasons } = this.deps.operator.read.performance();
    if (pairs.length === 0) return 'no closed trades yet';
    const line = (name: string, r: PerformanceRow) =>
      `${name} ${r.pnl.startsWith('-') ? '' : '+'}${r.pnl} ${r.quoteAsset} · ${r.trades} trades · ${r.winRatePct ?? '-'}% won`;
    return [
      'by pair:',
      ...pairs.map((r) => line(r.symbol, r)),
      'by exit reason:',
      ...exitReasons.map((r) => line(r.reason, r)),
    ].join('\n');
  }

  private countTitle(): string {
    const { trades, groups } = this.deps.operator.read.openTrades();
    const limited = groups.some((g) => g.max !== null);
    return `open trades: ${trades}${limited ? '' : ' (no maxOpenTrades limit)'}`;
  }

  /** Each multi-pair file against its maxOpenTrades (its pairs holding a trade, a working buy counted), then the positions. */
  private countText(): string {
    const { open, groups } = this.deps.operator.read.openTrades();
    return [
      ...groups.map(
        (g) =>
          `${g.group}: ${g.open.length}${g.max === null ? ' (no maxOpenTrades limit)' : ` of ${g.max} (maxOpenTrades)`}${g.open.length > 0 ? ` · ${g.open.join(', ')}` : ''}`,
      ),
      ...open.map(
        (t) =>
          `${t.instance} ${t.symbol} ${t.quantity} @ ${t.averagePrice}${t.unrealisedPnl === null ? '' : ` · open ${t.unrealisedPnl.startsWith('-') ? '' : '+'}${t.unrealisedPnl}`}`,
      ),
    ].join('\n');
  }

  /** The latest warnings and errors, newest last, as many as fit one message. */
  private logsText(n: number): string {
    const lines = this.deps.operator.read
      .logs(n)
      .map((l) =>
        [
          new Date(l.time).toISOString().slice(0, 19).replace('T', ' '),
          l.level.toUpperCase(),
          `${l.subject === undefined ? '' : `${l.subject}: `}${l.msg}${l.error === undefined ? '' : ` (${l.error})`}`,
        ].join(' '),
      );
    if (lines.length === 0) return 'none since the daemon started';
    const kept: string[] = [];
    let size = 0;
    for (const line of lines.reverse()) {
      if (size + line.length + 1 > LOGS_TEXT_MAX) break;
      kept.unshift(line);
      size += line.length + 1;
    }
    return kept.join('\n');
  }

  private statusText(): string {
    const { view } = this.deps.operator.read.status();
    const lines = guardLines(view);
    // A multi-pair file: its total first, then a short line per pair under it.
    const firstOf = new Map(view.groups.map((g) => [g.instances[0]?.instance, g]));
    for (const i of view.report.instances) {
      const group = firstOf.get(i.instance);
      if (group !== undefined) lines.push(...groupLines(group, view.rules));
      const r = instanceRounder(i, view.rules);
      const pos = i.position.quantity.isZero()
        ? 'flat'
        : `pos ${r.baseAsset(i.position.quantity)} @ ${r.price(i.position.averagePrice)}`;
      const pair = instanceGroup(i.instance);
      lines.push(
        `${pair === undefined ? i.instance : `  ${pair.symbol}`} ${i.state}${i.reason !== undefined ? ` (${i.reason})` : ''} · ${pos} · ${i.openOrders.length} open · today ${signed(i.realisedToday, r.quote)}`,
      );
    }
    if (view.report.instances.length === 0) lines.push('no instances yet');
    return lines.join('\n');
  }

  private pnlText(): string {
    const { view } = this.deps.operator.read.status();
    const { instances } = view.report;
    if (instances.length === 0) return 'no instances yet';
    return instances
      .map((i) => {
        const q = instanceRounder(i, view.rules).quote;
        return `${i.instance}: ${signed(i.realisedToday, q)} · ${signed(i.realisedPnl, q)} · ${i.unrealisedPnl === undefined ? '-' : signed(i.unrealisedPnl, q)}`;
      })
      .join('\n');
  }

  private balanceText(): string {
    const lines = this.deps.operator.read.balances();
    if (lines.length === 0) return 'no balances';
    return lines.map((b) => `${b.asset} ${b.free}${b.locked !== '0' ? ` (locked ${b.locked})` : ''}`).join('\n');
  }
}
