import { getMetadataStorage } from 'class-validator';
import { readFileSync } from 'node:fs';
import { Environment, InvalidEnvironmentError, validateEnvironment } from './environment.js';

describe('validateEnvironment', () => {
  it('applies the documented defaults', () => {
    const env = validateEnvironment({});
    expect(env).toMatchObject({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATABASE_URL: 'sqlite:./data/app.sqlite',
      LOG_LEVEL: 'info',
      TOKEN_TTL_SECONDS: 31536000,
      TOKEN_ISSUER: 'http://localhost:3000',
      TOKEN_AUDIENCE: 'api',
      TRUST_PROXY: false,
    });
  });

  it.each([
    [{ PORT: '38117' }, 'http://localhost:38117'],
    [{ HOST: '::', PORT: '8080' }, 'http://localhost:8080'],
    [{ HOST: '127.0.0.1', PORT: '8080' }, 'http://127.0.0.1:8080'],
    [{ HOST: '::1' }, 'http://[::1]:3000'],
    [{ HOST: 'api.internal', TOKEN_ISSUER: 'https://api.example.com' }, 'https://api.example.com'],
  ])('derives TOKEN_ISSUER from HOST and PORT unless set: %o', (raw, issuer) => {
    expect(validateEnvironment(raw).TOKEN_ISSUER).toBe(issuer);
  });

  it('coerces numbers and booleans from strings', () => {
    const env = validateEnvironment({ PORT: '8080', TRUST_PROXY: 'true' });
    expect(env.PORT).toBe(8080);
    expect(env.TRUST_PROXY).toBe(true);
  });

  it.each([
    [
      { PORT: 'abc' },
      /^Invalid configuration: PORT must be an integer from 1 to 65535 \(got "abc"\)$/,
    ],
    [{ PORT: '70000' }, /PORT must be an integer from 1 to 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be sqlite:<path>/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error/],
    [{ TOKEN_SIGNING_KEY: 'not a pem' }, /TOKEN_SIGNING_KEY must be a PEM private key/],
  ])('refuses %o with one line naming the variable', (raw, message) => {
    let error: unknown;
    try {
      validateEnvironment(raw);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidEnvironmentError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('\n');
  });
});

describe('.env.example', () => {
  const lines = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8').split('\n');
  const listed = lines
    .map((line) => /^#? ?([A-Z][A-Z0-9_]+)=(.*)$/.exec(line))
    .filter((match) => match !== null);

  it('lists every variable the service reads, and only those', () => {
    const declared = getMetadataStorage()
      .getTargetValidationMetadatas(Environment, '', true, false)
      .map((metadata) => metadata.propertyName);
    expect(listed.map(([, name]) => name).sort()).toEqual([...new Set(declared)].sort());
  });

  it('shows each default as the default', () => {
    const defaults = validateEnvironment({}) as unknown as Record<string, unknown>;
    const shown = listed.filter(([line]) => !line.startsWith('#'));
    for (const [, name, value] of shown)
      expect(`${name}=${String(defaults[name])}`).toBe(`${name}=${value}`);
  });
});
