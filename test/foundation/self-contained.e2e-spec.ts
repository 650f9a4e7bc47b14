import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/processes.js';

/** docs/contract.md §1: the repository describes itself; what it cites exists in it. */
describe('the repository stands alone', () => {
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\n')
    .filter((file) => /\.(ts|mjs|js|md|json|ya?ml)$/.test(file) && file !== 'package-lock.json');
  const text = (file: string) => readFileSync(join(ROOT, file), 'utf8');
  const self = 'test/foundation/self-contained.e2e-spec.ts';

  it('no file refers to a folder beside the repository', () => {
    const outside = files.filter((file) => file !== self && /\.\.\/shared\//.test(text(file)));
    expect(outside).toEqual([]);
  });

  it('every section of docs/contract.md that is cited exists', () => {
    const sections = new Set(
      [...text('docs/contract.md').matchAll(/^## (\d+)\. /gm)].map((match) => match[1]),
    );
    const cited = files.flatMap((file) =>
      [...text(file).matchAll(/docs\/contract\.md §(\d+)/g)].map((match) => `${file} §${match[1]}`),
    );
    expect(cited.length).toBeGreaterThan(20);
    expect(cited.filter((citation) => !sections.has(citation.split('§')[1]))).toEqual([]);
  });
});
