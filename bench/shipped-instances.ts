/** Ten instances of the shipped strategies (the shipped configs, in turn, with numbered names): bench/loop.ts and the soak. */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStrategyFiles } from '../src/config/loader.js';
import type { InstanceSpec } from '../src/engine/instance-runner.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export async function shippedInstances(count = 10): Promise<InstanceSpec[]> {
  const shipped = await loadStrategyFiles(join(ROOT, 'config'), { strategiesDir: join(ROOT, 'strategies') });
  const instances: InstanceSpec[] = [];
  for (let k = 0; instances.length < count; k++) {
    const base = shipped[k % shipped.length]!;
    instances.push({ ...base, config: { ...base.config, name: `${base.config.name}-${k}` } });
  }
  return instances;
}
