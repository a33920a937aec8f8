// The compiled build that `bot`, `npm start`, the sweep workers and the image run: dist/src and dist/strategies,
// the TypeScript of src/ and strategies/ transpiled file by file by esbuild (what tsx does in memory at every
// start; checking the types is `npm run typecheck`'s job) and the other files there (the dashboard's) copied.
//
// It is made when needed and never run stale. dist/sources.json records, for every source file, its size, mtime
// and ctime as they were before the file was read (ctime: no tool sets it back, so a checkout, `git pull`, an
// edit, `tar -x` or `cp -p` all change it). A start whose sources differ from that record makes again the files
// that changed (a fresh clone: all of them, about half a second), deletes the output of a source that is gone,
// then writes the record. Each output is written under a temporary name and renamed, so a process running the
// build never reads half a file, and two starts making it at once write the same bytes. A source that does not
// compile becomes a module that throws its error when imported, so a broken strategy fails as that strategy, as
// it would under tsx. `node bin/build.js` (`npm run build`) makes it and says what it did.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DIST = join(ROOT, 'dist');
const SOURCES = ['src', 'strategies'];
const RECORD = join(DIST, 'sources.json');
/** Raised when what the build makes of a source changes (its options, its layout): everything is made again. */
const FORMAT = 3;
/** tsconfig.json's options that change what a file compiles to (esbuild reads these, as tsx does). */
const TSCONFIG = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: true } };

/** Every file under src/ and strategies/, by its path from the root, with its size, mtime and ctime. */
function sources() {
  const files = {};
  for (const top of SOURCES) {
    for (const entry of readdirSync(join(ROOT, top), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile()) continue;
      const path = join(entry.parentPath, entry.name);
      const s = statSync(path);
      files[relative(ROOT, path).split(sep).join('/')] = `${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
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
 * Brings dist/ up to date with the sources. Returns how many files it made (0: it was up to date) and how long
 * that took. Throws when the build cannot be written (a read-only checkout) or esbuild is missing.
 */
export async function ensureBuild() {
  const started = performance.now();
  const now = sources();
  let built = record();
  if (built === undefined) {
    // No record (a first build, or one by another tool or format): nothing there is known to be current.
    for (const top of SOURCES) rmSync(join(DIST, top), { recursive: true, force: true });
    built = {};
  }
  const changed = Object.keys(now).filter((f) => built[f] !== now[f]);
  const gone = Object.keys(built).filter((f) => !(f in now));
  if (changed.length === 0 && gone.length === 0) return { made: 0, ms: performance.now() - started };
  const { transform } = await import('esbuild');
  await Promise.all(
    changed.map(async (source) => {
      const content = source.endsWith('.ts') ? await compile(source, transform) : readFileSync(join(ROOT, source));
      writeAtomically(outputOf(source), content);
    }),
  );
  for (const source of gone) rmSync(outputOf(source), { force: true });
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
