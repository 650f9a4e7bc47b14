// Writes the OpenAPI document exactly as the built server serves it (GET /docs/openapi.json) to
// the file named by the first argument: a throwaway in-memory database, a free port, then stop.
// `.ci/run` lints the result with redocly.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const out = process.argv[2];
if (!out) {
  console.error('usage: node scripts/export-openapi.mjs <file>');
  process.exit(2);
}
const root = resolve(import.meta.dirname, '..');

const probe = createServer().listen(0, '127.0.0.1');
await once(probe, 'listening');
const { port } = probe.address();
probe.close();

// An empty working directory: a developer's .env must not change the document.
const cwd = mkdtempSync(join(tmpdir(), 'company-api-openapi-'));
const server = spawn(process.execPath, [join(root, 'dist/src/main.js')], {
  cwd,
  env: {
    ...process.env,
    DATABASE_URL: 'sqlite::memory:',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  const deadline = Date.now() + 60000;
  for (;;) {
    if (server.exitCode !== null) throw new Error('the server exited before serving the document');
    const res = await fetch(`http://127.0.0.1:${port}/docs/openapi.json`).catch(() => undefined);
    if (res?.status === 200) {
      writeFileSync(out, JSON.stringify(await res.json(), null, 2));
      break;
    }
    if (Date.now() > deadline) throw new Error('the server did not serve the document in 60 s');
    await new Promise((r) => setTimeout(r, 200));
  }
} finally {
  server.kill('SIGTERM');
  await once(server, 'exit');
  rmSync(cwd, { recursive: true, force: true });
}
