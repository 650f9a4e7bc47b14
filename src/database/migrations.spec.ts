import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = join(process.cwd(), 'src/database/migrations');

/**
 * Migrations are frozen text: a migration that imports a helper changes whenever the helper
 * does, and an old database would then be migrated by code it never ran. Each carries its own,
 * or imports a versioned helper of src/database/frozen/, whose files are never edited.
 */
describe('migrations', () => {
  const files = readdirSync(folder).filter((file) => file.endsWith('.ts'));

  it.each(files)('%s imports nothing but typeorm and frozen helpers', (file) => {
    const text = readFileSync(join(folder, file), 'utf8');
    const sources = [...text.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)].map((match) => match[1]);
    expect(
      sources.filter((source) => source !== 'typeorm' && !source.startsWith('../frozen/')),
    ).toEqual([]);
  });
});
