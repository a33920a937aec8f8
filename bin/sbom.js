// `npm run sbom [-- FILE]`: the software bill of materials of what the daemon runs, CycloneDX 1.5 JSON, written
// to FILE (default sbom.cdx.json): every production dependency installed in node_modules with its version,
// licence, package URL and integrity hash, as `npm sbom` reads them from the lockfile and node_modules (no
// network). The production ones are those package-lock.json does not mark `dev` (npm sbom's own `--omit dev`
// leaves out tsx and esbuild, which vitest pulls in as well). npm names the root component after its folder
// (`app` in the image); it is named here after package.json, with its version and licence. The image carries
// the one of its own node_modules in /app/sbom.cdx.json (Dockerfile). `npm run sbom -- FILE --of BOM` keeps of BOM
// what package-lock.json holds now: the trading image's, once the research dependencies are pruned.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const out = process.argv[2] ?? 'sbom.cdx.json';
const of = process.argv[3] === '--of' ? process.argv[4] : undefined;
/** npm sbom's bill, or the one `--of BOM` names (npm sbom refuses a tree without its dev dependencies). */
function npmBill() {
  if (of !== undefined) return readFileSync(of, 'utf8');
  const npm = spawnSync('npm', ['sbom', '--sbom-format', 'cyclonedx', '--sbom-type', 'application'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (npm.status !== 0) {
    process.stderr.write(`npm sbom failed (exit ${npm.status}):\n${npm.stderr}`);
    process.exit(1);
  }
  return npm.stdout;
}
const read = (file) => JSON.parse(readFileSync(join(ROOT, file), 'utf8'));
const pkg = read('package.json');
const production = new Set(
  Object.entries(read('package-lock.json').packages)
    .filter(([path, entry]) => path !== '' && entry.dev !== true)
    .map(
      ([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`,
    ),
);
const bom = JSON.parse(npmBill());
const root = bom.metadata.component;
const ref = `${pkg.name}@${pkg.version}`;
const kept = (r) => production.has(r);
bom.components = bom.components.filter((c) => kept(c['bom-ref']));
bom.dependencies = (bom.dependencies ?? []).filter((d) => d.ref === root['bom-ref'] || kept(d.ref));
for (const dep of bom.dependencies) {
  // The root is pointed at by its new name.
  if (dep.ref === root['bom-ref']) dep.ref = ref;
  if (dep.dependsOn !== undefined) dep.dependsOn = dep.dependsOn.filter(kept);
}
Object.assign(root, {
  'bom-ref': ref,
  name: pkg.name,
  version: pkg.version,
  description: pkg.description,
  purl: `pkg:npm/${pkg.name}@${pkg.version}`,
  licenses: [{ license: { name: pkg.license } }],
});
writeFileSync(out, `${JSON.stringify(bom, null, 2)}\n`);
console.log(`${out}: CycloneDX ${bom.specVersion}, ${ref}, ${bom.components.length} components`);
