import { type CliCommand, CliUsageError } from '../cli/cli-command.js';
import { type ReplayResult, WebhookProcessor } from './webhook-processor.js';
import { UUID_PATTERN } from './uuid-v7.js';

/**
 * `webhooks:replay --id <uuid>` or `webhooks:replay --failed`: runs failed events' handlers again.
 * Prints `{"processed":n,"failed":n,"skipped":n,"events":[{id, event, result, status, attempts,
 * last_error}]}`; an event that is not failed is skipped, never processed twice.
 */
export const webhooksReplayCommand: CliCommand = {
  name: 'webhooks:replay',
  usage: 'webhooks:replay --id <uuid> | --failed',
  description: 'Processes again one stored webhook event, or every failed one.',
  options: { id: { type: 'string' }, failed: { type: 'boolean' } },
  context: 'app',
  async run({ app, values }) {
    const { id, failed } = values;
    if ((id === undefined) === (failed !== true)) {
      throw new CliUsageError('Give either --id <uuid> or --failed.');
    }
    if (id !== undefined && (typeof id !== 'string' || !UUID_PATTERN.test(id))) {
      throw new CliUsageError('--id must be a UUID.');
    }
    const processor = app!.get(WebhookProcessor);
    const outcomes =
      typeof id === 'string'
        ? [await processor.replay(id.toLowerCase())]
        : await processor.replayFailed();

    const count = (result: ReplayResult) => outcomes.filter((o) => o.result === result).length;
    return {
      processed: count('processed'),
      failed: count('failed'),
      skipped: count('skipped'),
      events: outcomes.map(({ row, result }) => ({
        id: row.id,
        event: row.event,
        result,
        status: row.status,
        attempts: row.attempts,
        last_error: row.lastError,
      })),
    };
  },
};
