import { CliUsageError, type CliCommand, type CliValues } from '../cli/cli-command.js';
import { ClientsService } from './clients.service.js';
import { GRANT_TYPES, isGrantType } from './grant-types.js';
import { RevocationService } from './revocation.service.js';
import { isScope, SCOPES } from './scopes.js';
import { isPlausibleUsername, MIN_PASSWORD_LENGTH, UsersService } from './users.service.js';

function text(values: CliValues, flag: string): string {
  const value = values[flag];
  if (typeof value !== 'string') throw new CliUsageError(`--${flag} is required.`);
  if (value.trim() === '') throw new CliUsageError(`--${flag} must not be blank.`);
  return value;
}

function list(value: string, separator: RegExp) {
  return [...new Set(value.split(separator).filter(Boolean))];
}

export const clientsCreateCommand: CliCommand = {
  name: 'clients:create',
  usage: 'clients:create --name <name> --scopes "<s1 s2>" [--grants client_credentials,password]',
  description: 'Registers an OAuth client; prints its id and its secret (shown this once).',
  options: {
    name: { type: 'string' },
    scopes: { type: 'string' },
    grants: { type: 'string' },
  },
  flags: {
    name: 'A name for people (at most 255 characters, no control characters).',
    scopes:
      'Scopes the client may request, separated by spaces or commas: customers:read, customers:write, webhooks:read, webhooks:write.',
    grants: 'Grants the client may use, comma-separated (default: client_credentials).',
  },
  context: 'app',
  async run({ app, values }) {
    const name = text(values, 'name');
    // Counted in characters, not UTF-16 units; a control character (a newline…) has no place
    // in a name shown to people and in logs.
    if ([...name].length > 255 || /\p{Cc}/u.test(name)) {
      throw new CliUsageError(
        '--name must be at most 255 characters, none of them control characters.',
      );
    }
    const scopes = list(text(values, 'scopes'), /[\s,]+/);
    if (scopes.length === 0) {
      throw new CliUsageError(`--scopes must name at least one of: ${SCOPES.join(' ')}.`);
    }
    const unknownScopes = scopes.filter((s) => !isScope(s));
    if (unknownScopes.length) {
      throw new CliUsageError(
        `Unknown scope ${unknownScopes.join(', ')}; scopes are: ${SCOPES.join(' ')}.`,
      );
    }
    const grants = list((values.grants as string | undefined) ?? 'client_credentials', /[\s,]+/);
    const unknownGrants = grants.filter((g) => !isGrantType(g));
    if (unknownGrants.length || grants.length === 0) {
      throw new CliUsageError(`--grants must list some of: ${GRANT_TYPES.join(', ')}.`);
    }
    const created = await app!.get(ClientsService).create({
      name,
      scopes: scopes.filter(isScope),
      grants: grants.filter(isGrantType),
    });
    return { client_id: created.clientId, client_secret: created.clientSecret };
  },
};

export const clientsDisableCommand: CliCommand = {
  name: 'clients:disable',
  usage: 'clients:disable --client-id <id>',
  description: 'Disables a client and revokes every token it holds.',
  options: { 'client-id': { type: 'string' } },
  flags: { 'client-id': 'The client to disable, as clients:create printed it.' },
  context: 'app',
  async run({ app, values }) {
    const { clientId, tokensNotBefore } = await app!
      .get(ClientsService)
      .disable(text(values, 'client-id'));
    return {
      client_id: clientId,
      disabled: true,
      tokens_not_before: new Date(tokensNotBefore * 1000).toISOString(),
    };
  },
};

export const usersCreateCommand: CliCommand = {
  name: 'users:create',
  usage: 'users:create --username <u> --password <p>',
  description: 'Creates a resource owner for the password grant (password: 8 characters or more).',
  options: { username: { type: 'string' }, password: { type: 'string' } },
  flags: {
    username: 'At most 255 printable characters.',
    password: 'At least 8 characters; stored as an scrypt hash.',
  },
  context: 'app',
  async run({ app, values }) {
    const username = text(values, 'username');
    if (!isPlausibleUsername(username)) {
      throw new CliUsageError('--username must be at most 255 printable characters.');
    }
    const password = text(values, 'password');
    if ([...password].length < MIN_PASSWORD_LENGTH) {
      throw new CliUsageError(`--password must be at least ${MIN_PASSWORD_LENGTH} characters.`);
    }
    return app!.get(UsersService).create(username, password);
  },
};

export const tokensRevokeCommand: CliCommand = {
  name: 'tokens:revoke',
  usage: 'tokens:revoke --token <jwt>',
  description: "Revokes one access token signed by this service's keys, whatever its issuer.",
  options: { token: { type: 'string' } },
  flags: { token: 'The access token (a JWT) to revoke.' },
  context: 'app',
  async run({ app, values }) {
    const claims = await app!.get(RevocationService).revoke(text(values, 'token'));
    return {
      revoked: true,
      jti: claims.jti,
      client_id: claims.client_id,
      expires_at: new Date(claims.exp * 1000).toISOString(),
    };
  },
};

export const authCommands = [
  clientsCreateCommand,
  clientsDisableCommand,
  usersCreateCommand,
  tokensRevokeCommand,
];
