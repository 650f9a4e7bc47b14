// Builds dist/ with `nest build` unless it is newer than every source file. Runs after
// `npm install` (so `npm start` on a fresh clone starts at once) and before start/test/cli.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const output = join(root, 'dist/src/main.js');
const nestCli = join(root, 'node_modules/@nestjs/cli/bin/nest.js');

function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

const inputs = ['ormconfig.ts', 'tsconfig.json', 'tsconfig.build.json', 'package.json'].map(
  (file) => statSync(join(root, file)).mtimeMs,
);
const newest = Math.max(newestSource(join(root, 'src')), ...inputs);
if (existsSync(output) && statSync(output).mtimeMs >= newest) process.exit(0);

if (!existsSync(nestCli)) {
  console.error('build skipped: @nestjs/cli is not installed (install dev dependencies to build)');
  process.exit(existsSync(output) ? 0 : 1);
}
// On stderr, so that a command's own output (the CLI's JSON) stays as it is.
console.error('building dist/ (a source file changed; a minute or two)…');
execFileSync(process.execPath, [nestCli, 'build'], { cwd: root, stdio: 'inherit' });
