/**
 * One outgoing message from a group of notices: the mode first (LIVE / PAPER), then one short line per notice,
 * most urgent first in the header, capped to what the channel takes. Every text passes through the redactor:
 * a secret that reached an event's data by mistake still never leaves in a message.
 */
import { type Level, LEVELS, type Notice, levelOf, levelRank, noticeText } from './event-kinds.js';

export type Mode = 'live' | 'paper';

export interface OutgoingMessage {
  /** The notices' keys, comma-separated: with one notice per message (the webhook's), that notice's key. */
  key: string;
  mode: Mode;
  level: Level;
  text: string;
  notices: readonly Notice[];
}

/** Lines shown before "… and N more". */
const MAX_LINES = 15;

/** Replaces every occurrence of the given secrets (and nothing shorter than 4 characters) with [redacted]. */
export function redactor(secrets: readonly (string | undefined)[]): (text: string) => string {
  const list = [...new Set(secrets.filter((s): s is string => s !== undefined && s.length >= 4))].sort(
    (a, b) => b.length - a.length,
  );
  if (list.length === 0) return (text) => text;
  return (text) => {
    let out = text;
    for (const s of list) if (out.includes(s)) out = out.split(s).join('[redacted]');
    return out;
  };
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function header(notices: readonly Notice[]): string {
  const kinds = new Set(notices.map((n) => n.kind));
  if (kinds.size === 1) {
    const kind = notices[0]?.kind ?? '';
    return kind === 'fill' ? plural(notices.length, 'fill') : `${notices.length} × ${kind}`;
  }
  const fills = notices.filter((n) => n.kind === 'fill').length;
  return fills > 0 ? `${plural(notices.length, 'event')} (${plural(fills, 'fill')})` : plural(notices.length, 'event');
}

const MARK: Record<Level, string> = { info: '', warn: '⚠ ', error: '‼ ' };

/** Composes one message of `notices` (in order), at most `maxLength` characters. */
export function composeMessage(
  notices: readonly Notice[],
  mode: Mode,
  maxLength: number,
  redact: (text: string) => string = (t) => t,
): OutgoingMessage {
  const level = notices.reduce<Level>((top, n) => {
    const l = levelOf(n);
    return levelRank(l) > levelRank(top) ? l : top;
  }, LEVELS[0]);
  const tag = mode === 'live' ? 'LIVE' : 'PAPER';
  let text: string;
  if (notices.length === 1) {
    text = `${tag} · ${MARK[level]}${noticeText(notices[0] as Notice)}`;
  } else {
    const lines = notices.slice(0, MAX_LINES).map((n) => `${MARK[levelOf(n)]}${noticeText(n)}`);
    if (notices.length > MAX_LINES) lines.push(`… and ${notices.length - MAX_LINES} more`);
    text = `${tag} · ${MARK[level]}${header(notices)}\n${lines.join('\n')}`;
  }
  text = redact(text);
  if (text.length > maxLength) text = `${text.slice(0, maxLength - 1)}…`;
  return { key: notices.map((n) => n.key).join(','), mode, level, text, notices };
}
