import { CliUsageError, type CliCommand } from '../cli/cli-command.js';
import { SigningKeysService } from './signing-keys.service.js';

/** docs/contract.md §3 key rotation: rotate, list, retire (docs/operations.md has the procedure). */
export const keysRotateCommand: CliCommand = {
  name: 'keys:rotate',
  usage: 'keys:rotate',
  description:
    'Makes a new signing key that signs every token from now on (every instance within 1 s); the previous key keeps verifying.',
  options: {},
  context: 'app',
  run: ({ app }) => app!.get(SigningKeysService).rotate(),
};

export const keysListCommand: CliCommand = {
  name: 'keys:list',
  usage: 'keys:list',
  description:
    'Lists the signing keys: kid, algorithm, state (signing, verifying or retired), source and dates.',
  options: {},
  context: 'app',
  run: async ({ app }) => ({ keys: await app!.get(SigningKeysService).list() }),
};

export const keysRetireCommand: CliCommand = {
  name: 'keys:retire',
  usage: 'keys:retire --kid <kid>',
  description:
    'Retires a verifying key: it leaves the JWKS and every instance refuses its tokens within 1 s.',
  options: { kid: { type: 'string' } },
  flags: {
    kid: 'The key id, as keys:list prints it; write --kid=<kid> (a kid may begin with "-").',
  },
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
