import { CliUsageError, type CliCommand } from '../cli/cli-command.js';
import { SigningKeysService } from './signing-keys.service.js';

/** CONTRACT §3 key rotation: rotate, list, retire (README "Security" has the procedure). */
export const keysRotateCommand: CliCommand = {
  name: 'keys:rotate',
  usage: 'keys:rotate',
  options: {},
  context: 'app',
  run: ({ app }) => app!.get(SigningKeysService).rotate(),
};

export const keysListCommand: CliCommand = {
  name: 'keys:list',
  usage: 'keys:list',
  options: {},
  context: 'app',
  run: async ({ app }) => ({ keys: await app!.get(SigningKeysService).list() }),
};

export const keysRetireCommand: CliCommand = {
  name: 'keys:retire',
  usage: 'keys:retire --kid <kid>',
  options: { kid: { type: 'string' } },
  context: 'app',
  run: ({ app, values }) => {
    const kid = values.kid;
    if (typeof kid !== 'string' || kid.trim() === '') {
      throw new CliUsageError('--kid is required.');
    }
    return app!.get(SigningKeysService).retire(kid);
  },
};

export const keysCommands = [keysRotateCommand, keysListCommand, keysRetireCommand];
