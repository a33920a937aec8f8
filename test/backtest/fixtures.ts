/** Shared inputs of the backtest tests: a grid strategy file in a temp dir and a two-day slice of the sample. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
export const FROM = '2023-03-09T00:00:00Z';
export const TO = '2023-03-11T00:00:00Z';

export function tempDir(prefix = 'backtest-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A grid tight enough to trade a lot over the slice (the banking-scare fall of March 9-10). */
export function gridConfig(dir: string, overrides: Record<string, unknown> = {}): string {
  const file = join(dir, 'grid-test.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'grid-test',
      strategy: 'grid',
      symbol: 'BTCUSDT',
      schedule: '*/5 * * * * *',
      params: { levels: 4, spacingPct: '0.4', quantity: '0.001', ...overrides },
      risk: { maxOrderNotional: '50', maxOpenOrders: 12, maxPosition: '0.01' },
    }),
  );
  return file;
}
