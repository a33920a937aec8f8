// The compiled build that `bot`, `npm start`, the sweep workers and the image run: dist/src and dist/strategies,
// the TypeScript of src/ and strategies/ transpiled file by file by esbuild (what tsx does in memory at every
// start; checking the types is `npm run typecheck`'s job) and the other files there (the dashboard's) copied;
// and dist/bundle, src/ bundled by esbuild from the modules a process starts from (ENTRIES), split at each lazy
// import (a command's module, the report's, ...) into chunks shared between them. What a process loads comes
// from the bundle: the entries' files in dist/src only re-export theirs (dist/src/cli.js, the strategy API a
// strategy module imports, the workers' modules), so every module has one instance per thread, the strategies'
// API included. A start then loads a few dozen files instead of ~400 (a small backtest: ~0.13 CPU s less).
// Where src/ does not bundle (a source that does not compile), the entries' files are their own compiled
// modules instead and the process runs file by file, as before, the broken module failing where imported.
// And dist/node_modules/zod, zod bundled into a package of six files that every module of dist/ (and every
// strategy, through the loader) imports instead of node_modules' 95 (PREBUILT_PACKAGES).
//
// It is made when needed and never run stale. dist/sources.json records, for every source file, its size, mtime
// and ctime as they were before the file was read (ctime: no tool sets it back, so a checkout, `git pull`, an
// edit, `tar -x` or `cp -p` all change it). A start whose sources differ from that record makes again the files
// that changed (a fresh clone: all of them, about half a second), deletes the output of a source that is gone,
// then writes the record. Each output is written under a temporary name and renamed, so a process running the
// build never reads half a file, and two starts making it at once write the same bytes. A source that does not
// compile becomes a module that throws its error when imported, so a broken strategy fails as that strategy, as
// it would under tsx. `node bin/build.js` (`npm run build`) makes it and says what it did.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = join(ROOT, 'dist');
const SOURCES = ['src', 'strategies'];
const RECORD = join(DIST, 'sources.json');
const BUNDLE = join(DIST, 'bundle');
/** Raised when what the build makes of a source changes (its options, its layout; 6: zod's locale files by their
 * exported names): everything is made again. */
const FORMAT = 6;
/**
 * The modules a process starts from, by their name in dist/bundle: the command line, the strategy API (what
 * strategy modules import: the bundle's own, so a strategy and the engine share its decimals and indicators) and
 * the modules worker threads start from (workerEntry: the name is the file's).
 */
const ENTRIES = {
  cli: 'src/cli.ts',
  api: 'src/strategy/api.ts',
  'sweep-worker': 'src/backtest/sweep-worker.ts',
  'migration-worker': 'src/store/migration-worker.ts',
};
/**
 * Packages compiled into the bundle; the others stay imports from node_modules. Only a package that no module
 * outside the bundle shares may be: strategies import zod themselves (the loader checks their schemas with
 * `instanceof`), tsx and pino start threads from their own files, better-sqlite3 is native. trading-signals is
 * reached only through src/strategy/indicators.ts and is 176 ES modules: one load instead of 176.
 */
const BUNDLED_PACKAGES = new Set(['trading-signals']);
/**
 * Packages the build makes again as a package of its own, dist/node_modules/NAME: each of its exports (`zod`,
 * `zod/v4`, `zod/mini`, ...) bundled by esbuild, split into chunks they share, at the path of the package's own
 * file, under a package.json exporting them as the package does. Node's resolution from any module in dist/ (the
 * bundle, the compiled strategies, the file-by-file fallback) finds it before the root's node_modules, and the
 * strategy loader resolves a TypeScript strategy's `zod` from dist/ (src/strategy/loader.ts), so a process holds
 * one instance, the one the engine checks strategy schemas against, with no import rewritten. zod is 95 ES
 * modules (a backtest imported them in 60-86 ms CPU): 6 files, about half of that.
 */
const PREBUILT_PACKAGES = new Set(['zod']);
const PREBUILT = join(DIST, 'node_modules');
/** Bundle files no longer part of the bundle are deleted when older than this: a process started before a
 * rebuild may still import one of its chunks (a command's lazy import). */
const STALE_MS = 24 * 3600_000;
/** tsconfig.json's options that change what a file compiles to (esbuild reads these, as tsx does). */
const TSCONFIG = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: true } };

/** A key of sources() for a package compiled into the bundle (not a file to compile on its own). */
const PACKAGE = 'package:';

/**
 * Every file under src/ and strategies/, by its path from the root, with its size, mtime and ctime; and each
 * package the bundle compiles in or the build makes again, by its package.json's (an upgrade by `npm ci` or
 * `npm update` changes it, and the bundle or the prebuilt package is made again).
 */
function sources() {
  const files = {};
  const stamp = (path) => {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
  };
  for (const top of SOURCES) {
    for (const entry of readdirSync(join(ROOT, top), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      // Paths by concatenation (ROOT ends with a separator): path.relative resolves both paths against the working
      // directory, for every file of every start (5-10 ms CPU of each).
      const path = `${entry.parentPath}${sep}${entry.name}`;
      files[path.slice(ROOT.length).split(sep).join('/')] = stamp(path);
    }
  }
  for (const name of [...BUNDLED_PACKAGES, ...PREBUILT_PACKAGES]) {
    const manifest = join(ROOT, 'node_modules', name, 'package.json');
    try {
      const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
      files[`${PACKAGE}${name}`] = `${version}:${stamp(manifest)}`;
    } catch {
      files[`${PACKAGE}${name}`] = 'missing';
    }
  }
  return files;
}

/** The record of the sources the build was made from; undefined when there is none of this format. */
function record() {
  try {
    const saved = JSON.parse(readFileSync(RECORD, 'utf8'));
    return saved.format === FORMAT ? saved.files : undefined;
  } catch {
    return undefined;
  }
}

/** dist/<source>, a .ts as .js. */
const outputOf = (source) => join(DIST, source.endsWith('.ts') ? source.replace(/\.ts$/, '.js') : source);

/** `to` as an import specifier from a module in `fromDir`. */
function specifier(fromDir, to) {
  const rel = relative(fromDir, to).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

function writeAtomically(path, content) {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, content);
  renameSync(temp, path);
}

/** A module that throws the compiler's error when imported, naming the source file and the place. */
function failing(source, err) {
  const first = err.errors?.[0];
  const where = first?.location ? `${source}:${first.location.line}:${first.location.column + 1}` : source;
  return `throw new SyntaxError(${JSON.stringify(`${where}: ${first?.text ?? err.message}`)});\n`;
}

async function compile(source, transform) {
  const code = readFileSync(join(ROOT, source), 'utf8');
  try {
    const out = await transform(code, {
      loader: 'ts',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // An inline source map naming the source from where the output lies: with source maps on (bin/bot.js, a
      // sweep's workers), a stack trace names strategies/x.ts and its line, not dist/strategies/x.js's. Without
      // the sources' text: V8 keeps each module's source (its map inside) and Node the map parsed, for the whole
      // run, and the TypeScript text in them was about 6 MB of a backtest's peak RSS; a trace needs the mappings.
      sourcemap: 'inline',
      sourcesContent: false,
      sourcefile: relative(dirname(outputOf(source)), join(ROOT, source))
        .split(sep)
        .join('/'),
      tsconfigRaw: TSCONFIG,
    });
    return out.code;
  } catch (err) {
    return failing(source, err);
  }
}

/**
 * Every module of src/ keeps, in the bundle, the import.meta.url of its own file in dist/src: what it finds
 * beside itself (strategies/, the dashboard's files, a worker's module, dist/sources.json) is where it was.
 */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith(join(ROOT, 'src', sep))) return undefined;
      const code = readFileSync(args.path, 'utf8');
      if (!code.includes('import.meta.url')) return undefined;
      const own = JSON.stringify(specifier(BUNDLE, outputOf(relative(ROOT, args.path))));
      return { contents: code.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`), loader: 'ts' };
    });
  },
};

/** A module in dist/src that is ENTRIES[name]'s bundle file: its hashbang, and everything it exports. */
function reexport(source, name, exports) {
  const first = readFileSync(join(ROOT, source), 'utf8').split('\n', 1)[0];
  const to = JSON.stringify(specifier(dirname(outputOf(source)), join(BUNDLE, `${name}.js`)));
  return [
    ...(first.startsWith('#!') ? [first] : []),
    `// ${source} runs from the bundle (bin/build.js).`,
    `export * from ${to};`,
    ...(exports.includes('default') ? [`export { default } from ${to};`] : []),
    '',
  ].join('\n');
}

/** Deletes the files under `dir` that were not `made` and are older than STALE_MS (a running process may import them). */
function removeStale(dir, made) {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && !made.has(path) && statSync(path).mtimeMs < Date.now() - STALE_MS)
      rmSync(path, { force: true });
  }
}

/**
 * Makes dist/node_modules/NAME from node_modules/NAME (PREBUILT_PACKAGES): every export with an ES module target
 * bundled at that target's path, chunks shared between them under chunks/; a pattern's files (zod's
 * `./v4/locales/*`) are each a module re-exporting, as its default, the export of that name of the folder's index
 * (as a chunk of their own each, they would split the index into as many files).
 */
async function prebuild(esbuild, name) {
  const from = join(ROOT, 'node_modules', name);
  const to = join(PREBUILT, name);
  const manifest = JSON.parse(readFileSync(join(from, 'package.json'), 'utf8'));
  const target = (spec) => (typeof spec === 'string' ? spec : (spec?.import ?? spec?.default));
  const exports = {};
  const entryPoints = {};
  const patterns = [];
  for (const [subpath, spec] of Object.entries(manifest.exports)) {
    const file = target(spec);
    if (typeof file !== 'string' || !(file.endsWith('.js') || file.endsWith('/*'))) continue;
    exports[subpath] = file;
    if (file.includes('*')) patterns.push(file);
    else entryPoints[file.replace(/^\.\//, '').replace(/\.js$/, '')] = join(from, file);
  }
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    outdir: to,
    chunkNames: 'chunks/[hash]',
    metafile: true,
    write: false,
    logLevel: 'silent',
  });
  const files = result.outputFiles.map((file) => ({ path: file.path, contents: file.contents }));
  for (const pattern of patterns) {
    // ./v4/locales/*.js: the folder's index, when it was bundled, exports each file of it under the name the
    // package's own index gives it.
    const folder = dirname(pattern);
    const index =
      result.metafile.outputs[
        relative(ROOT, join(to, folder, 'index.js'))
          .split(sep)
          .join('/')
      ];
    const source = join(from, folder, 'index.js');
    const text = existsSync(source) ? readFileSync(source, 'utf8') : '';
    for (const [, exported, file] of text.matchAll(
      /export\s*\{\s*default\s+as\s+([\w$]+)\s*\}\s*from\s*["']\.\/([^"']+\.js)["']/g,
    ))
      if (index?.exports.includes(exported))
        files.push({
          path: join(to, folder, file),
          contents: `export { ${exported} as default } from "./index.js";\n`,
        });
  }
  const pkg = { name, version: manifest.version, type: 'module', exports };
  files.push({ path: join(to, 'package.json'), contents: `${JSON.stringify(pkg, null, 2)}\n` });
  // The package.json last: a process resolving the package meanwhile finds the files it points at.
  for (const file of files) writeAtomically(file.path, file.contents);
  removeStale(to, new Set(files.map((file) => file.path)));
}

/**
 * Bundles src/ into dist/bundle and points the entries' files in dist/src at it. When src/ does not bundle, the
 * entries' files are their own compiled modules instead: the build runs file by file.
 */
async function bundle(esbuild) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const external = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies })
    .filter((p) => !BUNDLED_PACKAGES.has(p))
    .flatMap((p) => [p, `${p}/*`]);
  let result;
  try {
    result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, source]) => [name, join(ROOT, source)])),
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outdir: BUNDLE,
      chunkNames: 'chunk-[hash]',
      // As the files' own maps: a stack trace names src/x.ts and its line, without the sources' text.
      sourcemap: 'inline',
      sourcesContent: false,
      external,
      plugins: [ownUrl],
      tsconfigRaw: TSCONFIG,
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
  } catch {
    await Promise.all(
      Object.values(ENTRIES).map(async (source) =>
        writeAtomically(outputOf(source), await compile(source, esbuild.transform)),
      ),
    );
    return;
  }
  const made = new Set();
  // The entries last: a process that imports an entry (a worker thread starting meanwhile) finds its chunks.
  const entryFiles = new Set(Object.keys(ENTRIES).map((name) => `${name}.js`));
  const last = (file) => (entryFiles.has(basename(file.path)) ? 1 : 0);
  for (const file of [...result.outputFiles].sort((a, b) => last(a) - last(b))) {
    writeAtomically(file.path, file.contents);
    made.add(file.path);
  }
  for (const [name, source] of Object.entries(ENTRIES)) {
    const output =
      result.metafile.outputs[
        relative(ROOT, join(BUNDLE, `${name}.js`))
          .split(sep)
          .join('/')
      ];
    writeAtomically(outputOf(source), reexport(source, name, output?.exports ?? []));
  }
  removeStale(BUNDLE, made);
}

/**
 * Brings dist/ up to date with the sources. Returns how many files it made (0: it was up to date) and how long
 * that took. Throws when the build cannot be written (a read-only checkout) or esbuild is missing.
 */
export async function ensureBuild() {
  const started = performance.now();
  const now = sources();
  let built = record();
  if (built === undefined) {
    // No record (a first build, or one by another tool or format): nothing there is known to be current.
    for (const top of [...SOURCES, 'bundle', 'node_modules']) rmSync(join(DIST, top), { recursive: true, force: true });
    built = {};
  }
  const changed = Object.keys(now).filter((f) => built[f] !== now[f]);
  const gone = Object.keys(built).filter((f) => !(f in now));
  const files = (keys) => keys.filter((f) => !f.startsWith(PACKAGE));
  if (changed.length === 0 && gone.length === 0) return { made: 0, ms: performance.now() - started };
  const esbuild = await import('esbuild');
  // The entries' files are written by bundle(): their own compiled module only where src/ does not bundle.
  const entries = new Set(Object.values(ENTRIES));
  await Promise.all(
    files(changed)
      .filter((source) => !entries.has(source))
      .map(async (source) => {
        const content = source.endsWith('.ts')
          ? await compile(source, esbuild.transform)
          : readFileSync(join(ROOT, source));
        writeAtomically(outputOf(source), content);
      }),
  );
  for (const source of files(gone)) rmSync(outputOf(source), { force: true });
  // The bundle is made again when anything in src/ or a package it compiles in changed (a first build: everything),
  // a prebuilt package when its own package.json did.
  const touched = new Set([...changed, ...gone]);
  if ([...touched].some((f) => f.startsWith('src/') || [...BUNDLED_PACKAGES].some((p) => f === `${PACKAGE}${p}`))) {
    await bundle(esbuild);
  }
  for (const name of PREBUILT_PACKAGES) if (touched.has(`${PACKAGE}${name}`)) await prebuild(esbuild, name);
  writeAtomically(RECORD, `${JSON.stringify({ format: FORMAT, files: now })}\n`);
  return { made: changed.length, ms: performance.now() - started };
}

/**
 * The entry the `bot` command imports: the build's cli.js, brought up to date first (one line on a terminal
 * when it made something). Undefined when the build cannot be made, after one line on stderr saying why: the
 * caller then runs the sources through tsx.
 */
export async function compiledEntry() {
  try {
    const { made, ms } = await ensureBuild();
    if (made > 0 && process.stderr.isTTY)
      process.stderr.write(`bot: compiled ${made} changed source file(s) into ${DIST} (${Math.round(ms)} ms)\n`);
    return pathToFileURL(join(DIST, 'src', 'cli.js')).href;
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    process.stderr.write(
      `bot: running the TypeScript sources through tsx (slower to start): cannot make the build in ${DIST}: ${reason}\n`,
    );
    return undefined;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { made, ms } = await ensureBuild();
  console.log(made === 0 ? `${DIST} is up to date` : `compiled ${made} file(s) into ${DIST} in ${Math.round(ms)} ms`);
}
