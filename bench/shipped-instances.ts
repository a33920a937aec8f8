/** Ten instances of the shipped strategies on BTCUSDT (the shipped configs, in turn, with numbered names): bench/loop.ts and the soak. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStrategyFiles } from '../src/config/loader.js';
import type { InstanceSpec } from '../src/engine/instance-runner.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export async function shippedInstances(count = 10): Promise<InstanceSpec[]> {
  // The BTCUSDT ones: the soak and the loop bench feed one pair's sample (the many-pair file's others are not in it).
  const shipped = (await loadStrategyFiles(join(ROOT, 'config'), { strategiesDir: join(ROOT, 'strategies') })).filter(
    (i) => i.config.symbol === 'BTCUSDT',
  );
  const instances: InstanceSpec[] = [];
  for (let k = 0; instances.length < count; k++) {
    const base = shipped[k % shipped.length]!;
    instances.push({ ...base, config: { ...base.config, name: `${base.config.name}-${k}` } });
  }
  return instances;
}
