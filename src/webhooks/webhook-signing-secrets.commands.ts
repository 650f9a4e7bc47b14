import { type CliCommand, CliUsageError } from '../cli/cli-command.js';
import { WebhookSigningSecretsService } from './webhook-signing-secrets.service.js';

/** docs/contract.md §6 signed deliveries: a client's Standard Webhooks secrets. */
export const clientsWebhookSecretCommand: CliCommand = {
  name: 'clients:webhook-secret',
  usage: 'clients:webhook-secret --client-id <id> [--retire <n>]',
  description:
    'Adds a Standard Webhooks signing secret to a client (shown this once), or retires one.',
  help: `Without --retire: creates a signing secret for the client and prints
{"client_id":"…","secret":"whsec_…"}. The secret is shown this once: it is stored encrypted
with WEBHOOK_SECRET_KEY (which must be set, the same for the CLI and every instance). From then
on, every POST /v2/webhooks of that client must carry the webhook-id, webhook-timestamp and
webhook-signature headers (Standard Webhooks) or it is refused with 401.

A client holds at most two secrets. To rotate, run the command again: deliveries signed with
either secret are accepted. Then retire the old one.

Running instances apply a change within about a second on PostgreSQL or with Redis, and within
REVOCATION_REFRESH_MS on SQLite.`,
  options: { 'client-id': { type: 'string' }, retire: { type: 'string' } },
  flags: {
    'client-id': 'The client (from clients:create).',
    retire:
      'Removes the nth secret, oldest first: 1 is the older of two (the one being rotated out), 2 the newer; retiring the last turns signing off. Prints {"client_id":"…","retired":<n>,"live_secrets":<k>}.',
  },
  context: 'app',
  async run({ app, values }) {
    const clientId = values['client-id'];
    if (typeof clientId !== 'string' || clientId.trim() === '') {
      throw new CliUsageError('--client-id is required.');
    }
    const secrets = app!.get(WebhookSigningSecretsService);
    if (values.retire === undefined) {
      const created = await secrets.create(clientId);
      return { client_id: created.clientId, secret: created.secret };
    }
    if (values.retire !== '1' && values.retire !== '2') {
      throw new CliUsageError('--retire must be 1 (the older secret) or 2 (the newer).');
    }
    const nth = Number(values.retire);
    const { live } = await secrets.retire(clientId, nth);
    return { client_id: clientId, retired: nth, live_secrets: live };
  },
};
