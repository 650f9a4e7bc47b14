// Instructions per Standard Webhooks check alone, counted by valgrind's callgrind: the
// `standardwebhooks` package's Webhook.verify() as shipped (its JavaScript SHA-256) against the
// service's NativeHmacWebhook (Node's HMAC, the rest the package's), over the bench's delivery
// body (bench/requests.mjs). Each is run with 2,000 and with 22,000 checks; the difference over
// 20,000 is the steady per-check cost, without start-up and JIT compilation. A server-level figure
// (bench/instructions.mjs c --signed) moves with the load's timing by more than this difference
// on a busy machine; this one does not. Needs the build (dist/). Takes 2–5 minutes.
// Usage: node bench/signature-instructions.mjs
import { Buffer } from 'node:buffer';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { commandLine } from './command-line.mjs';
import { webhookDelivery } from './requests.mjs';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const [, , role, impl, count] = process.argv;

if (role === '--child') {
  // One process of the count: `impl` checks `count` signed deliveries.
  const { NativeHmacWebhook } = await import('../dist/src/webhooks/native-hmac-webhook.js');
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const signer = new Webhook(secret);
  const verifier = impl === 'native' ? new NativeHmacWebhook(secret) : new Webhook(secret);
  const deliveries = Array.from({ length: 1000 }, (_, i) => {
    const body = Buffer.from(webhookDelivery(1_000_000 + i).body);
    const id = `msg_${randomBytes(8).toString('hex')}`;
    const at = new Date();
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signer.sign(id, at, body.toString()),
    };
    return { body, headers };
  });
  for (let i = 0; i < Number(count); i++) {
    const { body, headers } = deliveries[i % deliveries.length];
    verifier.verify(body, headers, { jsonParse: false });
  }
} else {
  commandLine(import.meta.url, { options: {} });
  const work = mkdtempSync(join(tmpdir(), 'company-api-signature-'));
  const total = (which, n) => {
    const out = join(work, `${which}-${n}.out`);
    execFileSync(
      'valgrind',
      ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath].concat([
        new URL(import.meta.url).pathname,
        '--child',
        which,
        String(n),
      ]),
      { cwd: ROOT, stdio: 'ignore' },
    );
    return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'))[1]);
  };
  const perCheck = (which) => Math.round((total(which, 22_000) - total(which, 2_000)) / 20_000);
  console.log(
    JSON.stringify({
      instructions_per_check: { package: perCheck('package'), native_hmac: perCheck('native') },
    }),
  );
}
