import { performance } from 'node:perf_hooks';
import { type CliCommand, CliUsageError } from '../cli/cli-command.js';
import { WebhookRetention } from './webhook-retention.service.js';
import { WebhookSeeder } from './webhook-seeder.service.js';
import { type ReplayResult, WebhookProcessor } from './webhook-processor.js';
import { UUID_PATTERN } from './uuid-v7.js';

/**
 * `webhooks:replay --id <uuid>` or `webhooks:replay --failed`: runs failed events' handlers again.
 * Prints `{"processed":n,"failed":n,"skipped":n,"events":[{id, event, result, status, attempts,
 * last_error}]}`; an event that is not failed is skipped, never processed twice, and so is one
 * deleted while the replay runs (`webhooks:prune` beside it): `{id, result: "skipped", status:
 * "deleted"}`, or, when it was deleted before the replay read it, only counted in `skipped`.
 * Exits 1 when an event failed again (the output is printed all the same), else 0.
 */
export const webhooksReplayCommand: CliCommand = {
  name: 'webhooks:replay',
  usage: 'webhooks:replay --id <uuid> | --failed',
  description: 'Processes again one stored webhook event, or every failed one.',
  options: { id: { type: 'string' }, failed: { type: 'boolean' } },
  flags: {
    id: 'The id of the failed event to process again.',
    failed: 'Every event that had failed when the command started, oldest attempt first.',
  },
  context: 'app',
  // Events that failed again are listed in the output, and the exit code says so.
  exitCode: (result) => ((result as { failed: number }).failed > 0 ? 1 : 0),
  async run({ app, values }) {
    const { id, failed } = values;
    if ((id === undefined) === (failed !== true)) {
      throw new CliUsageError('Give either --id <uuid> or --failed.');
    }
    if (id !== undefined && (typeof id !== 'string' || !UUID_PATTERN.test(id))) {
      throw new CliUsageError('--id must be a UUID.');
    }
    const processor = app!.get(WebhookProcessor);
    const { outcomes, unread } =
      typeof id === 'string'
        ? { outcomes: [await processor.replay(id.toLowerCase())], unread: 0 }
        : await processor.replayFailed();

    const count = (result: ReplayResult) => outcomes.filter((o) => o.result === result).length;
    return {
      processed: count('processed'),
      failed: count('failed'),
      // Also those gone before the replay reached them (pruned meanwhile): counted, not listed.
      skipped: count('skipped') + unread,
      events: outcomes.map(({ id, row, result }) =>
        row === null
          ? { id, result, status: 'deleted' }
          : {
              id: row.id,
              event: row.event,
              result,
              status: row.status,
              attempts: row.attempts,
              last_error: row.lastError,
            },
      ),
    };
  },
};

/** `webhooks:prune`: deletes the events past their retention now (the background job's work). */
export const webhooksPruneCommand: CliCommand = {
  name: 'webhooks:prune',
  usage: 'webhooks:prune',
  description:
    'Deletes now the webhook events past their retention (WEBHOOK_RETENTION_DAYS; failed ones after 90 days), as the background job does.',
  options: {},
  context: 'app',
  run: ({ app }) => app!.get(WebhookRetention).prune(),
};

const MAX_SEED_COUNT = 100_000_000;

/**
 * `webhooks:seed --count <n> [--client-id <id>] [--failed-every <k>] [--age-days <d>]`: stored
 * events for benchmarks and tests, listed for that client (default `seed`); every k-th one
 * failed; the newest received d days ago (default now).
 */
export const webhooksSeedCommand: CliCommand = {
  name: 'webhooks:seed',
  usage: `webhooks:seed --count <1-${MAX_SEED_COUNT}> [--client-id <id>] [--failed-every <k>] [--age-days <d>]`,
  description:
    'Stores that many processed sample events without running their handlers (for benchmarks and retention tests).',
  options: {
    count: { type: 'string' },
    'client-id': { type: 'string' },
    'failed-every': { type: 'string' },
    'age-days': { type: 'string' },
  },
  flags: {
    count: `How many events to store (1 to ${MAX_SEED_COUNT}).`,
    'client-id': 'The sending client they belong to (default: seed).',
    'failed-every': 'Stores every k-th event as failed (default: none).',
    'age-days': 'The newest event was received this many days ago (default: now).',
  },
  context: 'app',
  async run({ app, values }) {
    const count = positiveInteger(values.count, '--count', MAX_SEED_COUNT);
    const failedEvery =
      values['failed-every'] === undefined
        ? 0
        : positiveInteger(values['failed-every'], '--failed-every', MAX_SEED_COUNT);
    const ageDays =
      values['age-days'] === undefined
        ? 0
        : positiveInteger(values['age-days'], '--age-days', 3650);
    const clientId = values['client-id'] ?? 'seed';
    if (typeof clientId !== 'string' || !/^[\x21-\x7e]{1,36}$/.test(clientId)) {
      throw new CliUsageError('--client-id must be 1 to 36 printable characters.');
    }
    const started = performance.now();
    const result = await app!.get(WebhookSeeder).seed({ count, clientId, failedEvery, ageDays });
    return { ...result, elapsed_ms: Math.round(performance.now() - started) };
  },
};

function positiveInteger(value: unknown, flag: string, max: number): number {
  if (typeof value !== 'string' || !/^[1-9][0-9]*$/.test(value) || Number(value) > max) {
    throw new CliUsageError(`${flag} must be an integer from 1 to ${max}.`);
  }
  return Number(value);
}
