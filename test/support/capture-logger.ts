/** A logger whose lines a test reads: pino at debug level, JSON lines kept in memory as they are written. */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

/** A pino logger writing JSON lines into `lines`. */
export function captureLogger(): { logger: Logger; lines: string[]; messages: (re: RegExp) => string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  const logger = pino({ level: 'debug', base: undefined }, stream);
  return {
    logger,
    lines,
    messages: (re) => lines.map((l) => (JSON.parse(l) as { msg: string }).msg).filter((msg) => re.test(msg)),
  };
}
