import { authCommands } from '../auth/auth.commands.js';
import { keysCommands } from '../auth/keys.commands.js';
import { customersCreateCommand, customersSeedCommand } from '../customers/customers.commands.js';
import { dbStatusCommand } from '../database/index.js';
import {
  webhooksPruneCommand,
  webhooksReplayCommand,
  webhooksSeedCommand,
} from '../webhooks/webhooks.commands.js';
import { clientsWebhookSecretCommand } from '../webhooks/webhook-signing-secrets.commands.js';
import type { CliCommand } from './cli-command.js';

/** Every command of `npm run cli -- <command>`; each module exports its own. */
export const commands: CliCommand[] = [
  dbStatusCommand,
  ...authCommands,
  clientsWebhookSecretCommand,
  ...keysCommands,
  customersCreateCommand,
  customersSeedCommand,
  webhooksReplayCommand,
  webhooksPruneCommand,
  webhooksSeedCommand,
];
