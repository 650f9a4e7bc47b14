import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = process.cwd();
const frozen = join(root, 'src/database/frozen');

/** Every migration file of the service and its modules: `<timestamp>-<Name>.ts`, anywhere in src/. */
const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
  .filter((file) => /(^|\/)\d{13}-[A-Za-z0-9]+\.ts$/.test(file))
  .map((file) => join(root, 'src', file));

/**
 * Migrations are frozen text: a migration that imports a helper changes whenever the helper
 * does, and an old database would then be migrated by code it never ran. Each carries its own,
 * or imports a versioned helper of src/database/frozen/, whose files are never edited. A module's
 * migration in its own folder is held to the same rule.
 */
describe('migrations', () => {
  it('are found, those of src/database/migrations among them', () => {
    expect(files.some((file) => file.includes('/src/database/migrations/'))).toBe(true);
  });

  it.each(files.map((file) => relative(root, file)))(
    '%s imports nothing but typeorm and frozen helpers',
    (file) => {
      const text = readFileSync(join(root, file), 'utf8');
      const sources = [...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((match) => match[1]);
      const allowed = (source: string) =>
        source === 'typeorm' ||
        (source.startsWith('.') && dirname(resolve(root, dirname(file), source)) === frozen);
      expect(sources.filter((source) => !allowed(source))).toEqual([]);
    },
  );
});
