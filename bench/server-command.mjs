// The server's command line, exactly as `npm start` runs it (its node flags included), for
// bench/run.mjs and bench/instructions.mjs: the figures are `npm start`'s, not a variant's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Arguments for `process.execPath`: `npm start`'s node flags, then `nodeArgs` (e.g. `--cpu-prof`),
 * then the script. The start script reads `exec node <flags> <script>`.
 */
export function serverArgs(root, nodeArgs = []) {
  const words = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start.split(
    /\s+/,
  );
  const flags = words.slice(words.indexOf('node') + 1);
  const script = flags.pop();
  return [...flags, ...nodeArgs, join(root, script)];
}
