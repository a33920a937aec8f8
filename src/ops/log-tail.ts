/**
 * The daemon's latest warnings and errors, kept in memory as they are logged (the chat's /logs): a ring of
 * `capacity` lines, each as pino wrote it (after its redaction of secret fields), cut to `MAX_LINE` characters.
 * Bounded whatever the log does (design.md invariant 9), and cheap for every other line: a line below warn is
 * recognised by its level's digits without being parsed.
 */

/** One line kept: when (epoch ms), its level name, its message and the context a person needs. */
export interface LogLine {
  time: number;
  level: 'warn' | 'error' | 'fatal';
  /** The instance or component it is about, when the line names one. */
  subject: string | undefined;
  msg: string;
  /** The error's message, when the line carries an error. */
  error: string | undefined;
}

/** Characters of a message (and of an error's) kept at most. */
const MAX_TEXT = 300;
const LEVELS: Record<number, LogLine['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };
const WARN_OR_WORSE = /"level":(40|50|60)[,}]/;

const cut = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

export class LogTail {
  private readonly ring: (LogLine | undefined)[];
  private next = 0;

  constructor(readonly capacity = 200) {
    this.ring = new Array<LogLine | undefined>(capacity);
  }

  /** One serialized log line (pino's JSON); kept when it is a warning or worse. */
  push(json: string): void {
    if (!WARN_OR_WORSE.test(json)) return;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(json) as Record<string, unknown>;
    } catch {
      return;
    }
    const level = LEVELS[entry.level as number];
    if (level === undefined) return;
    const err = entry.err as { message?: unknown } | undefined;
    const subject = [entry.instance, entry.component, entry.channel].find((s) => typeof s === 'string');
    this.ring[this.next % this.capacity] = {
      time: typeof entry.time === 'number' ? entry.time : 0,
      level,
      subject: subject,
      msg: cut(typeof entry.msg === 'string' ? entry.msg : ''),
      error: typeof err?.message === 'string' ? cut(err.message) : undefined,
    };
    this.next++;
  }

  /** The latest `n` lines kept, oldest first. */
  recent(n: number): LogLine[] {
    const count = Math.min(n, this.capacity, this.next);
    const out: LogLine[] = [];
    for (let i = this.next - count; i < this.next; i++) out.push(this.ring[i % this.capacity] as LogLine);
    return out;
  }
}
