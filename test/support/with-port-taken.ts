/**
 * Runs vitest while another process holds a port (8080, the daemon's default API_PORT, unless PORT_TAKEN says
 * otherwise), to check that no test relies on a fixed port:
 *   npm run test:port-taken -- test/e2e/parity.test.ts test/e2e/composition.test.ts
 * The port is held by a child process of its own (not this one), as another program would hold it. If something
 * already listens there, that is the condition wanted: the tests run as they are.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const port = Number(process.env.PORT_TAKEN ?? '8080');
const root = fileURLToPath(new URL('../../', import.meta.url));
const holderSource = `
const server = require('node:net').createServer((s) => s.destroy());
server.once('error', (e) => { console.log('held by another process already (' + e.code + ')'); setInterval(() => {}, 1 << 30); });
server.listen(${port}, '0.0.0.0', () => console.log('listening'));
process.on('SIGTERM', () => process.exit(0));
`;
const holder = spawn(process.execPath, ['-e', holderSource], { stdio: ['ignore', 'pipe', 'inherit'] });
const ready = await new Promise<string>((resolve, reject) => {
  holder.stdout.once('data', (c: Buffer) => resolve(c.toString('utf8').trim()));
  holder.once('exit', (code) => reject(new Error(`the port holder exited (${code})`)));
});
console.log(`port ${port}: ${ready} (pid ${holder.pid}); running vitest ${process.argv.slice(2).join(' ')}`);
const vitest = spawn(process.execPath, [`${root}node_modules/vitest/vitest.mjs`, 'run', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
const code = await new Promise<number>((resolve) => vitest.once('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0))));
holder.kill('SIGTERM');
console.log(`vitest exited ${code} while port ${port} was taken`);
process.exit(code);
