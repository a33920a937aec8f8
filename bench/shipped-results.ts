/**
 * The shipped strategy files' backtest results on the BTCUSDT sample (21 days, the default flags), here and at an
 * earlier commit side by side (issue 38: what the candle decided at its close, size costs, pairing by tag and the
 * converged warm-up changed). The earlier commit is checked out in a temporary git worktree with this checkout's
 * node_modules, and each side runs its own `bot backtest` (bin/bot.js, compiled on demand) into a temporary
 * folder; the figures are its summary.json's. Printed, never asserted; they do not depend on the machine.
 * `npm run bench:shipped-results -- --before 31f84cd` (default: the commit before 54ce81f, this round's first).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const flag = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] as string);
};
const before = flag('--before', '54ce81f^');
const SAMPLE = 'data/samples/BTCUSDT-2023-03-01_21.jsonl.gz';
const CONFIGS = ['grid', 'breakout', 'mean-reversion', 'dca', 'ema-trend'].map((n) => `config/${n}-btcusdt.json`);

interface Metrics {
  totalReturnPct: string;
  roundTrips: number;
  winRatePct: string | null;
  sharpe: string | null;
  fills: number;
  feesQuote: string;
}

function results(root: string): Map<string, Metrics & { pairing?: string }> {
  const out = new Map<string, Metrics & { pairing?: string }>();
  for (const config of CONFIGS) {
    const dir = mkdtempSync(join(tmpdir(), 'shipped-results-'));
    try {
      execFileSync(process.execPath, ['bin/bot.js', 'backtest', '--config', config, '--data', SAMPLE, '--out', dir], {
        cwd: root,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const summary = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as {
        metrics: Metrics;
        pairing?: string;
      };
      out.set(config, { ...summary.metrics, pairing: summary.pairing });
    } catch {
      // exit 1 (an instance ended early) still writes the summary; anything else is shown as missing
      const file = join(dir, 'summary.json');
      if (existsSync(file)) out.set(config, (JSON.parse(readFileSync(file, 'utf8')) as { metrics: Metrics }).metrics);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return out;
}

const root = process.cwd();
const commit = execFileSync('git', ['rev-parse', '--short', before], { encoding: 'utf8' }).trim();
const worktree = mkdtempSync(join(tmpdir(), `shipped-results-${commit}-`));
execFileSync('git', ['worktree', 'add', '--detach', worktree, commit], { stdio: 'ignore' });
try {
  symlinkSync(join(root, 'node_modules'), join(worktree, 'node_modules'), 'dir');
  const was = results(worktree);
  const now = results(root);
  const row = (m: Metrics | undefined) =>
    m === undefined
      ? 'failed'
      : `${m.totalReturnPct.padStart(8)} % ${String(m.roundTrips).padStart(5)} trades, win ${(m.winRatePct ?? 'n/a').padStart(6)} %, Sharpe ${(m.sharpe ?? 'n/a').padStart(7)}, ${String(m.fills).padStart(5)} fills, fees ${m.feesQuote}`;
  console.log(`shipped strategy files on ${SAMPLE}, default flags: at ${commit} (before) and here (after)`);
  for (const config of CONFIGS) {
    console.log(`${config}\n  before ${row(was.get(config))}\n  after  ${row(now.get(config))}`);
  }
} finally {
  execFileSync('git', ['worktree', 'remove', '--force', worktree], { stdio: 'ignore' });
}
