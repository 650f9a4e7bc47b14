// The bench scripts' command lines: node's parseArgs plus `--help`, which prints the script's
// opening comment, and a one-line refusal with that help instead of a stack trace for a bad option.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** parseArgs(`config`) for the script at `scriptUrl` (its `import.meta.url`). */
export function commandLine(scriptUrl, config) {
  const help = () => {
    const lines = readFileSync(fileURLToPath(scriptUrl), 'utf8').split('\n');
    return lines
      .slice(
        0,
        lines.findIndex((line) => !line.startsWith('//')),
      )
      .map((line) => line.replace(/^\/\/ ?/, ''))
      .join('\n');
  };
  let parsed;
  try {
    parsed = parseArgs({
      ...config,
      options: { ...config.options, help: { type: 'boolean', short: 'h', default: false } },
    });
  } catch (error) {
    process.stderr.write(`${error.message}\n\n${help()}\n`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(`${help()}\n`);
    process.exit(0);
  }
  return parsed;
}
