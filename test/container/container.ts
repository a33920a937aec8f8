/**
 * `npm run test:container`: the project's Dockerfile built and run for real with podman (no Docker engine or
 * registry here; see podman.ts and stand-in-base.ts), checked end to end:
 * - the image: non-root user, volume, health check, stop signal, labels, `bot --version` naming the commit,
 *   no compiler or better-sqlite3 build leftovers; its size and the build time are printed;
 * - the trading image (the default target) without the research dependencies (none installed or in its SBOM;
 *   `bot data export --format parquet` and `bot worker` say what they need and where it is); the research target
 *   with them, exporting an hour of the sample to Parquet; a sweep of 4 on 2 worker threads in the trading image;
 * - paper with an empty host folder on /app/data: owned by root it fails with one line saying what to do,
 *   owned by the image's user it runs, as uid 1000, and `podman healthcheck run` passes; the probes and the
 *   metrics answer on the metrics port from outside the container, and nothing else does there;
 * - a second container on the same volume is refused at once, naming the holder, while the first trades on;
 * - live against a `bot sim` container (hardened as compose runs it: read-only root, tmpfs, no capabilities), keys from secret files, a TypeScript strategy of one's own mounted on
 *   /strategies (a bare folder importing spot-bot/strategy and zod, which the image resolves to its own):
 *   orders and fills land in the volume's database and survive `podman stop` + `podman start`;
 * - a journal of an older schema is backed up beside itself (named for the versions) and migrated, every order
 *   kept; 80 upgrades, eight at once, leave every journal current and the process alive; the counters are on
 *   /metrics at 0 before their first event;
 * - every `podman stop` exits 0 within the grace period (node, PID 1, stops on SIGTERM itself).
 * Needs root, podman, debootstrap and runc (.ci/run installs them). Exit 0 when every check passed.
 */
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { gitCommit } from '../../src/app/installation.js';
import { LATEST_VERSION } from '../../src/store/migrations.js';
import { RESEARCH_PACKAGES } from '../../src/ops/research-import.js';
import { readDb, ROOT, waitFor } from '../e2e/daemon-process.js';
import { freePort } from '../support/free-port.js';
import { writeOldJournal } from '../support/old-journal.js';
import { deadline } from '../support/until.js';
import { cacheDir, onPath, Podman } from './podman.js';
import { BASE_IMAGE, ensureStandInBase } from './stand-in-base.js';

const IMAGE = 'localhost/spot-bot:test';
const RESEARCH_IMAGE = 'localhost/spot-bot-research:test';
const PREFIX = 'spot-bot-test-';
/** Docker's and podman's default grace period between SIGTERM and SIGKILL. */
const GRACE_S = 10;

const t0 = Date.now();
const phases: { name: string; start: number }[] = [];
/**
 * A script for the image's node: ROUNDS times, WIDTH copies of the journal TEMPLATE upgraded at once
 * (store/journal-upgrade.ts); prints how many ended at the latest schema. A file, not `node -e`: the upgrade's
 * worker thread would inherit --input-type and refuse to start.
 */
const UPGRADE_STRESS = `
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, schemaVersion } from '/app/src/store/database.js';
import { upgradeJournal } from '/app/src/store/journal-upgrade.js';
import { LATEST_VERSION } from '/app/src/store/migrations.js';
const [template, rounds, width] = process.argv.slice(2);
const dir = mkdtempSync(join(tmpdir(), 'upgrades-'));
let current = 0;
for (let r = 0; r < Number(rounds); r++) {
  await Promise.all(Array.from({ length: Number(width) }, async (_, i) => {
    const path = join(dir, 'r' + r + '-' + i + '.db');
    copyFileSync(template, path);
    await upgradeJournal(path, Date.now(), () => {});
    const db = connect(path);
    if (schemaVersion(db) === LATEST_VERSION) current++;
    db.close();
  }));
}
console.log(current);
`;
const UPGRADE_ROUNDS = 10;
const UPGRADE_WIDTH = 8;

function phase(name: string): void {
  phases.push({ name, start: Date.now() });
  console.log(`\n== ${name}`);
}
const phaseTimes = () =>
  phases
    .map((p, i) => `${p.name} ${(((phases[i + 1]?.start ?? Date.now()) - p.start) / 1000).toFixed(1)} s`)
    .join(', ');

function check(condition: boolean, what: string, detail = ''): void {
  if (!condition) throw new Error(`FAILED: ${what}${detail === '' ? '' : `\n${detail}`}`);
  console.log(`ok: ${what}`);
}

function requirements(): void {
  const missing = ['podman', 'debootstrap', 'runc'].filter((c) => !onPath(c));
  if (missing.length > 0)
    throw new Error(`needs ${missing.join(', ')}: apt-get install -y podman debootstrap runc (.ci/run does it)`);
  if (process.getuid?.() !== 0) throw new Error('needs root (debootstrap, rootful podman)');
}

/** A host folder for /app/data, empty, owned by uid:gid. */
function hostFolder(parent: string, name: string, owner: number): string {
  const dir = join(parent, name);
  mkdirSync(dir, { mode: 0o755 });
  chownSync(dir, owner, owner);
  return dir;
}

const messages = (logs: string): string[] =>
  logs
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => (JSON.parse(l) as { msg?: string }).msg ?? '');

async function main(): Promise<void> {
  requirements();
  const podman = new Podman(cacheDir());
  const logs = (name: string) => {
    const r = podman.run(['logs', name], { allowFail: true });
    return r.stdout + r.stderr;
  };
  /** Waits until the container's log messages satisfy `done`; on time out, says so with the log's end. */
  const waitForLog = async (name: string, what: string, done: (msgs: string[]) => boolean, ms = 60_000) => {
    try {
      await waitFor(what, () => done(messages(logs(name))), { giveUp: deadline(ms) });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n--- ${name}:\n${logs(name).slice(-4000)}`);
    }
  };
  const stale = podman.run(['ps', '-a', '--filter', `name=${PREFIX}`, '--format', '{{.Names}}']).stdout.trim();
  if (stale !== '') podman.run(['rm', '-f', ...stale.split('\n')]);
  const work = mkdtempSync(join(podman.cache, 'tmp', 'run-'));
  const containers: string[] = [];
  /** `podman run -d` with the options every container here shares. */
  const start = (name: string, args: string[]) => {
    containers.push(name);
    podman.run(['run', '-d', '--name', name, '--network', 'host', ...args]);
  };
  /** `podman stop`: returns how long it took; the exit code must be 0, inside the grace period. */
  const stop = (name: string): number => {
    const began = Date.now();
    podman.run(['stop', '--time', String(GRACE_S), name]);
    const seconds = (Date.now() - began) / 1000;
    const code = podman.run(['inspect', name, '--format', '{{.State.ExitCode}}']).stdout.trim();
    check(
      code === '0' && seconds < GRACE_S,
      `podman stop ${name}: exit 0 within ${GRACE_S} s`,
      `exit ${code} after ${seconds} s\n${logs(name).slice(-3000)}`,
    );
    return seconds;
  };

  try {
    phase('stand-in base image');
    console.log(`${BASE_IMAGE}: ${ensureStandInBase(podman, (l) => console.log(l))} (cache: ${podman.cache})`);

    phase('build');
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    const revision = gitCommit(ROOT) ?? '';
    /** Builds the Dockerfile's `target` (default: the last, the trading image) as `tag`, labelled as CI would. */
    const build = async (tag: string, target?: string): Promise<number> => {
      const start = Date.now();
      await podman.stream(
        [
          'build',
          '--pull=never',
          '--format',
          'docker',
          '--network',
          'host',
          ...(target === undefined ? [] : ['--target', target]),
          '-t',
          tag,
          '--build-arg',
          `VERSION=${version}`,
          '--build-arg',
          `REVISION=${revision}`,
          '--build-arg',
          'SOURCE=https://example.invalid/spot-bot',
          ROOT,
        ],
        `  build${target === undefined ? '' : ` ${target}`}| `,
      );
      return (Date.now() - start) / 1000;
    };
    const buildSeconds = await build(IMAGE);

    phase('the image');
    const inspect = (format: string, image = IMAGE) =>
      podman.run(['image', 'inspect', '--format', format, image]).stdout.trim();
    const sizeMb = (image: string) => Number(inspect('{{.Size}}', image)) / 1e6;
    check(inspect('{{.Config.User}}') === '1000:1000', 'runs as USER 1000:1000 (numeric, for runAsNonRoot)');
    check(inspect('{{json .Config.Volumes}}').includes('"/app/data"'), 'VOLUME /app/data');
    check(inspect('{{.Config.StopSignal}}') === 'SIGTERM', 'STOPSIGNAL SIGTERM');
    check(
      inspect('{{json .Config.Entrypoint}}') === '["node","--max-semi-space-size=2","/app/src/cli.js"]',
      'ENTRYPOINT starts node with the young generation capped, as bin/bot.js does',
    );
    check(inspect('{{json .Config.Healthcheck.Test}}').includes('healthcheck'), 'HEALTHCHECK runs `bot healthcheck`');
    const labels = JSON.parse(inspect('{{json .Config.Labels}}')) as Record<string, string>;
    check(
      labels['org.opencontainers.image.version'] === version &&
        labels['org.opencontainers.image.revision'] === revision &&
        labels['org.opencontainers.image.source'] !== undefined,
      'OCI labels: version, revision, source',
      JSON.stringify(labels),
    );
    const shown = podman.run(['run', '--rm', IMAGE, '--version']).stdout.trim();
    check(
      shown === `spot-bot ${version}${revision === '' ? '' : ` (commit ${revision.slice(0, 12)})`}`,
      `bot --version: ${shown}`,
    );
    const nodeVersion = podman.runIn(IMAGE, 'node', ['--version']).stdout.trim();
    const sbom = podman
      .runIn(IMAGE, 'node', [
        '-p',
        'const b = require("/app/sbom.cdx.json"); [b.bomFormat, b.metadata.component.name, b.components.some((c) => c.name === "better-sqlite3")].join(" ")',
      ])
      .stdout.trim();
    check(sbom === 'CycloneDX spot-bot true', `/app/sbom.cdx.json: the image's bill of materials (${sbom})`);
    const leftovers = podman.runIn(IMAGE, 'sh', [
      '-c',
      'cd node_modules/better-sqlite3 && ls -A . build build/Release; command -v g++ make python3 cc || true; if test -d /app/node_modules/typescript; then echo devDependencies; fi',
    ]).stdout;
    check(
      !/\b(deps|src|obj\.target|sqlite3\.a|devDependencies)\b|\/(g\+\+|make|python3|cc)\b/.test(leftovers),
      'no compiler, no better-sqlite3 sources or objects, no dev dependencies',
      leftovers,
    );

    phase('the trading image leaves the research dependencies out; the research target has them');
    const shipped = (image: string) =>
      podman
        .runIn(image, 'node', [
          '-p',
          `const b = require("/app/sbom.cdx.json"); ${JSON.stringify(RESEARCH_PACKAGES)}.filter((p) => require("fs").existsSync("/app/node_modules/" + p) || b.components.some((c) => c.name === p)).join(" ")`,
        ])
        .stdout.trim();
    check(shipped(IMAGE) === '', `the trading image: none of ${RESEARCH_PACKAGES.join(', ')} installed or in its SBOM`);
    // One hour of the sample: the export itself takes a moment.
    const exportArgs = (out: string) => [
      'data',
      'export',
      '--format',
      'parquet',
      '--from',
      '2023-03-08T00:00:00Z',
      '--to',
      '2023-03-08T01:00:00Z',
      '--out',
      out,
      '/app/samples/BTCUSDT-2023-03-01_21.jsonl.gz',
    ];
    const leftOut = podman.run(['run', '--rm', IMAGE, ...exportArgs('/tmp/hour.parquet')], { allowFail: true });
    check(
      leftOut.code === 1 &&
        leftOut.stderr.includes(
          'bot data export --format parquet needs hyparquet-writer, which this installation leaves out',
        ) &&
        leftOut.stderr.includes('--target research'),
      'the trading image: bot data export --format parquet says it needs hyparquet-writer and where it is',
      leftOut.stdout + leftOut.stderr,
    );
    // A sweep on the image's Node: its worker threads started, fed and stopped, under the tier-up flag V8 12 takes
    // (a flag it did not know would be an error line on stderr).
    const sweep = podman.runIn(
      IMAGE,
      'sh',
      [
        '-c',
        'node /app/src/cli.js backtest --config /app/config/grid-btcusdt.json --data /app/samples/BTCUSDT-2023-03-01_21.jsonl.gz ' +
          '--from 2023-03-08T00:00:00Z --to 2023-03-09T00:00:00Z --sweep spacingPct=0.2,0.3,0.4,0.5 --workers 2 ' +
          '--no-cache --out /tmp/sweep && tail -n +2 /tmp/sweep/sweep.csv | wc -l',
      ],
      { allowFail: true },
    );
    check(
      sweep.code === 0 &&
        sweep.stdout.trim().split('\n').at(-1) === '4' &&
        !/Fatal error|Check failed|unrecognized flag|Error:/.test(sweep.stderr),
      'the trading image: a sweep of 4 on 2 worker threads, every combination in sweep.csv, no error on stderr',
      sweep.stdout + sweep.stderr,
    );
    const noWorker = podman.run(['run', '--rm', IMAGE, 'worker', '--queue', 'redis://127.0.0.1:1'], {
      allowFail: true,
    });
    check(
      noWorker.code === 1 && noWorker.stderr.includes('bot worker needs bullmq'),
      'the trading image: bot worker says it needs bullmq',
      noWorker.stdout + noWorker.stderr,
    );
    const researchSeconds = await build(RESEARCH_IMAGE, 'research');
    check(
      shipped(RESEARCH_IMAGE) === RESEARCH_PACKAGES.join(' '),
      `the research image: ${RESEARCH_PACKAGES.join(', ')} installed and in its SBOM`,
    );
    const exported = podman.runIn(
      RESEARCH_IMAGE,
      'sh',
      ['-c', `node /app/src/cli.js ${exportArgs('/tmp/hour.parquet').join(' ')} && wc -c < /tmp/hour.parquet`],
      { allowFail: true },
    );
    check(
      exported.code === 0 && Number(exported.stdout.trim()) > 0,
      `the research image: bot data export --format parquet writes ${exported.stdout.trim()} bytes`,
      exported.stdout + exported.stderr,
    );

    phase('paper, empty host folder owned by root');
    const rootOwned = hostFolder(work, 'data-root', 0);
    const refused = podman.run(['run', '--rm', '--network', 'host', '-v', `${rootOwned}:/app/data`, IMAGE], {
      allowFail: true,
    });
    const problems = messages(refused.stdout).filter((m) => m.startsWith('DB_PATH'));
    check(
      refused.code === 1 && problems.length === 1 && /cannot write in \/app\/data .*chown 1000:1000/.test(problems[0]!),
      `refused with one line: ${problems[0]}`,
      refused.stdout + refused.stderr,
    );

    phase('paper, empty host folder owned by the image user');
    const paperData = hostFolder(work, 'data-paper', 1000);
    const apiPort = await freePort();
    // Host networking: each container gets a metrics port of its own (the image's 9464 would be shared).
    const metricsPort = await freePort();
    const paper = `${PREFIX}paper`;
    start(paper, [
      '-v',
      `${paperData}:/app/data`,
      '-e',
      `API_PORT=${apiPort}`,
      '-e',
      `METRICS_PORT=${metricsPort}`,
      '-e',
      'ORDERS_POLL=* * * * * *',
      IMAGE,
    ]);
    await waitForLog(paper, 'the paper daemon to run', (m) => m.includes('daemon running'));
    const status = podman.run(['exec', paper, 'cat', '/proc/1/status']).stdout;
    check(/^Uid:\s+1000\s/m.test(status), 'PID 1 runs as uid 1000 (not root)');
    check(existsSync(join(paperData, 'bot.db')), 'the journal is in the host folder');
    await waitFor(
      'podman healthcheck run to pass',
      () => podman.run(['healthcheck', 'run', paper], { allowFail: true }).code === 0,
      { giveUp: deadline(60_000) },
    );
    check(true, 'podman healthcheck run: healthy (bot healthcheck: /healthz of the metrics listener on loopback)');
    // From outside the container: the image's METRICS_HOST=0.0.0.0 listener, probes and metrics only.
    const outside = `http://127.0.0.1:${metricsPort}`;
    const healthz = await fetch(`${outside}/healthz`);
    const alive = (await healthz.json()) as { live?: boolean; phase?: string };
    check(healthz.status === 200 && alive.live === true && alive.phase === 'running', `${outside}/healthz: 200, alive`);
    let readyStatus = 0;
    for (const deadline = Date.now() + 30_000; readyStatus !== 200 && Date.now() < deadline;) {
      readyStatus = (await fetch(`${outside}/readyz`)).status;
      if (readyStatus !== 200) await new Promise((r) => setTimeout(r, 500));
    }
    check(readyStatus === 200, `${outside}/readyz: 200`);
    const scrape = await (await fetch(`${outside}/metrics`)).text();
    check(/^spot_bot_orders_placed_total\{/m.test(scrape), `${outside}/metrics: the bot's metrics`);
    // Every series a counter will have is there from the start at 0, so the first event shows in increase().
    const zeros = [
      'spot_bot_orders_rejected_total{bot_instance="grid-btcusdt",symbol="BTCUSDT",side="SELL",type="OCO"} 0',
      'spot_bot_exchange_errors_total{code="E_TIMEOUT"} 0',
    ];
    check(
      zeros.every((line) => scrape.split('\n').includes(line)),
      `${outside}/metrics: counters at 0 before their first event (${zeros.join(', ')})`,
      scrape,
    );
    check(
      (await fetch(`${outside}/api/v1/status`)).status === 404,
      `${outside}/api/v1/status: 404 (no control API on the metrics port)`,
    );

    // One daemon per journal: a second container on the same volume is refused at once, naming the holder.
    const paperOrdersNow = readDb(join(paperData, 'bot.db'), (d) =>
      d.prepare('SELECT count(*) FROM paper_orders').pluck().get(),
    ) as number;
    const second = `${PREFIX}paper-second`;
    start(second, [
      '-v',
      `${paperData}:/app/data`,
      '-e',
      `API_PORT=${await freePort()}`,
      '-e',
      `METRICS_PORT=${await freePort()}`,
      IMAGE,
    ]);
    await waitFor(
      'the second container to exit',
      () => podman.run(['inspect', second, '--format', '{{.State.Status}}']).stdout.trim() === 'exited',
      { giveUp: deadline(30_000) },
    );
    const secondCode = podman.run(['inspect', second, '--format', '{{.State.ExitCode}}']).stdout.trim();
    const said = messages(logs(second));
    check(
      secondCode === '1' &&
        said.length === 1 &&
        /^not started: (\/app\/)?data\/bot\.db is in use by another bot: pid 1 on host \S+ \(container [0-9a-f]{12}\) since \S+; one daemon per journal/.test(
          said[0]!,
        ),
      `a second container on the volume: refused, exit 1, one line: ${said[0]}`,
      logs(second),
    );
    await waitFor(
      'the first container to trade on',
      () =>
        (readDb(join(paperData, 'bot.db'), (d) =>
          d.prepare('SELECT count(*) FROM paper_orders').pluck().get(),
        ) as number) > paperOrdersNow,
      { giveUp: deadline(60_000) },
    );
    check(
      podman.run(['inspect', paper, '--format', '{{.State.Status}}']).stdout.trim() === 'running',
      'the first trades on',
    );
    // The paper account lives in the volume and survives a container restart (issue 17): same account, its
    // orders and fills kept, the replay going on, nothing moved aside.
    const paperDb = join(paperData, 'bot.db');
    const paperCount = (table: string) =>
      readDb(paperDb, (d) => d.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number);
    const paperOpened = () =>
      readDb(paperDb, (d) => d.prepare('SELECT created_at FROM paper_exchange').pluck().get() as number | undefined);
    await waitFor('the paper account to hold orders', () => paperCount('paper_orders') > 0);
    const paperStop = stop(paper);
    const paperBefore = { opened: paperOpened(), orders: paperCount('paper_orders'), fills: paperCount('paper_fills') };
    podman.run(['start', paper]);
    await waitForLog(paper, 'the paper daemon to run again', (m) =>
      m.some((msg) => msg.startsWith('paper account resumed from')),
    );
    await waitForLog(
      paper,
      'the paper daemon to be running',
      (m) => m.filter((msg) => msg === 'daemon running').length >= 2,
    );
    stop(paper);
    check(
      paperOpened() === paperBefore.opened &&
        paperCount('paper_orders') >= paperBefore.orders &&
        paperCount('paper_fills') >= paperBefore.fills,
      `paper: the account survived podman stop + start (${paperCount('paper_orders')} orders, ${paperCount('paper_fills')} fills)`,
      JSON.stringify(paperBefore),
    );
    check(
      readdirSync(paperData)
        .filter((f) => f.endsWith('.db'))
        .join() === 'bot.db',
      'paper: nothing archived on restart',
    );

    phase('paper, a journal of an older schema');
    // An older version's journal: backed up beside it first (named for the versions), then migrated.
    const oldData = hostFolder(work, 'data-old', 1000);
    writeOldJournal(join(oldData, 'bot.db'), { fills: 200, schema: 4, venue: 'paper' });
    chownSync(join(oldData, 'bot.db'), 1000, 1000);
    const upgrade = `${PREFIX}upgrade`;
    start(upgrade, [
      '-v',
      `${oldData}:/app/data`,
      '-e',
      `API_PORT=${await freePort()}`,
      '-e',
      `METRICS_PORT=${await freePort()}`,
      IMAGE,
    ]);
    await waitForLog(upgrade, 'the migrated daemon to run', (m) => m.includes('daemon running'));
    const upgradeStop = stop(upgrade);
    const backup = join(oldData, `bot.schema-4-before-${LATEST_VERSION}.db`);
    const versionAndOrders = (d: Database) =>
      [
        d.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get(),
        d.prepare('SELECT count(*) FROM orders').pluck().get(),
      ] as number[];
    const [backupVersion, backupOrders] = existsSync(backup) ? readDb(backup, versionAndOrders) : [];
    const [nowVersion, nowOrders] = readDb(join(oldData, 'bot.db'), versionAndOrders) as [number, number];
    check(
      backupVersion === 4 && backupOrders === 200 && nowVersion === LATEST_VERSION && nowOrders >= 200,
      `upgrade: schema 4 -> ${LATEST_VERSION}, every order kept (${nowOrders}), the backup ${backup.slice(oldData.length + 1)} at schema ${backupVersion} with ${backupOrders}`,
      logs(upgrade),
    );

    phase("journal upgrades under load, on the image's Node");
    // Many schema-4 journals upgraded, eight at once, in one process of the image: each upgrade's worker thread
    // must end by itself. A worker stopped as its module's evaluation completed aborted the process on Node 22's
    // V8 (a failed check in AsyncModuleExecutionFulfilled): all 10 of 10 runs of 80 upgrades aborted.
    const upgrades = hostFolder(work, 'upgrades', 1000);
    writeOldJournal(join(upgrades, 'schema-4.db'), { fills: 200, schema: 4, venue: 'paper' });
    writeFileSync(join(upgrades, 'stress.mjs'), UPGRADE_STRESS);
    const stress = podman.runIn(
      IMAGE,
      'node',
      ['/upgrades/stress.mjs', '/upgrades/schema-4.db', String(UPGRADE_ROUNDS), String(UPGRADE_WIDTH)],
      { mounts: [`${upgrades}:/upgrades:ro`], allowFail: true },
    );
    check(
      stress.code === 0 && stress.stdout.trim() === String(UPGRADE_ROUNDS * UPGRADE_WIDTH),
      `${UPGRADE_ROUNDS * UPGRADE_WIDTH} journal upgrades, ${UPGRADE_WIDTH} at once: every one current, the process alive`,
      stress.stdout + stress.stderr,
    );

    phase('live against a `bot sim` container');
    const simPort = await freePort();
    const secrets = join(work, 'secrets');
    mkdirSync(secrets);
    const key = `test-key-${process.pid}`;
    const secret = `test-secret-${Date.now()}-do-not-log`;
    writeFileSync(join(secrets, 'key'), `${key}\n`, { mode: 0o444 });
    writeFileSync(join(secrets, 'secret'), `${secret}\n`, { mode: 0o444 });
    const sim = `${PREFIX}sim`;
    start(sim, [
      '-v',
      `${secrets}:/run/secrets:ro`,
      '-e',
      'EXCHANGE_API_KEY_FILE=/run/secrets/key',
      '-e',
      'EXCHANGE_API_SECRET_FILE=/run/secrets/secret',
      IMAGE,
      'sim',
      '--port',
      String(simPort),
      // Prices on the wall clock: orders carry the times the daemon's history window asks about.
      '--random-walk',
      '--seed',
      '7',
      '--symbols',
      'BTCUSDT',
      '--start',
      'BTCUSDT=20000',
    ]);
    await waitFor('the simulated exchange', () => logs(sim).includes('simulated exchange at'));
    // A TypeScript strategy of one's own in a bare folder (no package.json, no node_modules) mounted outside /app,
    // importing the API as the package export and zod itself: the image resolves both to its own.
    const strategies = join(work, 'strategies');
    mkdirSync(strategies);
    const source = readFileSync(join(ROOT, 'test/e2e/strategies/every-order.ts'), 'utf8');
    const ownModule = source.replace("'../../../src/strategy/api.js'", "'spot-bot/strategy'");
    check(
      ownModule !== source && ownModule.includes("from 'zod'"),
      'the mounted strategy imports spot-bot/strategy and zod',
    );
    writeFileSync(join(strategies, 'every-order.ts'), ownModule);
    const config = join(work, 'config');
    mkdirSync(config);
    writeFileSync(
      join(config, 'churn.json'),
      JSON.stringify({
        name: 'churn',
        strategy: 'every-order',
        symbol: 'BTCUSDT',
        schedule: '* * * * * *',
        params: { churn: 1000 },
      }),
    );
    const liveData = hostFolder(work, 'data-live', 1000);
    const live = `${PREFIX}live`;
    // Hardened as the compose file runs it: a read-only root, a tmpfs on /tmp, no capability, no new privileges.
    start(live, [
      '--read-only',
      '--tmpfs',
      '/tmp',
      '--cap-drop',
      'ALL',
      '--security-opt',
      'no-new-privileges',
      '-v',
      `${liveData}:/app/data`,
      '-v',
      `${secrets}:/run/secrets:ro`,
      '-v',
      `${config}:/app/config:ro`,
      '-v',
      `${strategies}:/strategies:ro`,
      '-e',
      'MODE=live',
      '-e',
      `EXCHANGE_BASE_URL=http://127.0.0.1:${simPort}`,
      '-e',
      'EXCHANGE_API_KEY_FILE=/run/secrets/key',
      '-e',
      'EXCHANGE_API_SECRET_FILE=/run/secrets/secret',
      '-e',
      'STRATEGIES_DIR=/strategies',
      '-e',
      'ORDERS_POLL=* * * * * *',
      '-e',
      `API_PORT=${await freePort()}`,
      IMAGE,
    ]);
    const db = join(liveData, 'bot.db');
    const count = (table: string) =>
      readDb(db, (d) => d.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number);
    const fillsLogged = (m: string[]) => m.filter((msg) => msg === 'fill recorded').length;
    await waitForLog(live, 'fills from the live run', (m) => fillsLogged(m) >= 3);
    const liveStop1 = stop(live);
    const orders = count('orders');
    const fills = count('fills');
    check(orders >= 3 && fills >= 3, `orders (${orders}) and fills (${fills}) in the volume's database`);
    const firstLogs = logs(live);
    podman.run(['start', live]);
    await waitForLog(
      live,
      'the live daemon to run again',
      (m) => m.filter((msg) => msg === 'daemon running').length >= 2,
    );
    await waitForLog(live, 'more fills after the restart', (m) => fillsLogged(m) > fills + 1);
    const liveStop2 = stop(live);
    check(
      count('orders') > orders && count('fills') > fills,
      `the journal survived the restart and grew (${count('orders')} orders, ${count('fills')} fills)`,
    );
    check(
      readdirSync(liveData)
        .filter((f) => f.endsWith('.db'))
        .join() === 'bot.db',
      'live: nothing archived',
    );
    const starts = readDb(db, (d) =>
      d.prepare("SELECT kind FROM events WHERE kind LIKE 'daemon-%' ORDER BY id").pluck().all(),
    );
    check(
      starts.join() === 'daemon-started,daemon-stopped,daemon-started,daemon-stopped',
      `events: ${starts.join(', ')}`,
    );
    const allLogs = firstLogs + logs(live) + logs(sim);
    check(!allLogs.includes(secret), 'the secret from the file never reaches a log line');
    const simStop = stop(sim);

    phase('summary');
    console.log(
      `image ${IMAGE}: ${sizeMb(IMAGE).toFixed(0)} MB (base ${BASE_IMAGE}, a stand-in: ${sizeMb(BASE_IMAGE).toFixed(0)} MB), Node ${nodeVersion}; ${RESEARCH_IMAGE}: ${sizeMb(RESEARCH_IMAGE).toFixed(0)} MB (built in ${researchSeconds.toFixed(1)} s after the trading image)`,
    );
    console.log(
      `build: ${buildSeconds.toFixed(1)} s; podman stop: paper ${paperStop.toFixed(1)} s, upgraded ${upgradeStop.toFixed(1)} s, live ${liveStop1.toFixed(1)} s and ${liveStop2.toFixed(1)} s, sim ${simStop.toFixed(1)} s`,
    );
  } finally {
    if (containers.length > 0) podman.run(['rm', '-f', ...containers], { allowFail: true });
    rmSync(work, { recursive: true, force: true });
  }
  console.log(phaseTimes());
  console.log(`container test passed in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
