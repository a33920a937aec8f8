/**
 * `npm run sbom`: a CycloneDX bill of materials of the production dependencies, the root named after
 * package.json with its licence, each component with its version, licence and package URL; no dev dependency.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { tempDir } from '../support/temp-dir.js';

interface Component {
  name: string;
  version: string;
  purl: string;
  licenses?: { license: { id?: string; name?: string } }[];
}

it('writes the CycloneDX SBOM of what the daemon runs, named and licensed as package.json says', () => {
  const file = join(tempDir('sbom-'), 'sbom.cdx.json');
  execFileSync('npm', ['run', '--silent', 'sbom', '--', file], { encoding: 'utf8' });
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    name: string;
    version: string;
    license: string;
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  const bom = JSON.parse(readFileSync(file, 'utf8')) as {
    bomFormat: string;
    specVersion: string;
    metadata: { component: Component };
    components: Component[];
    dependencies: { ref: string; dependsOn?: string[] }[];
  };
  expect(bom.bomFormat).toBe('CycloneDX');
  expect(pkg.license).toMatch(/\S/);
  expect(bom.metadata.component).toMatchObject({
    name: pkg.name,
    version: pkg.version,
    licenses: [{ license: { name: pkg.license } }],
  });
  const names = new Set(bom.components.map((c) => c.name));
  for (const dep of Object.keys(pkg.dependencies)) expect(names, dep).toContain(dep);
  for (const dev of ['vitest', 'typescript', 'eslint', 'prettier']) expect(names, dev).not.toContain(dev);
  const sqlite = bom.components.find((c) => c.name === 'better-sqlite3');
  expect(sqlite?.purl).toMatch(/^pkg:npm\/better-sqlite3@\d/);
  expect(sqlite?.licenses?.[0]?.license.id).toBe('MIT');
  // The root's dependencies point at it by its new name.
  expect(bom.dependencies.find((d) => d.ref === `${pkg.name}@${pkg.version}`)?.dependsOn).toContain(
    `better-sqlite3@${sqlite?.version}`,
  );
});
