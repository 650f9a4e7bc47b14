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
      SQLITE_LOCK_TIMEOUT_MS: 5000,
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 72000,
    });
  });

  it('takes HTTP_KEEP_ALIVE_TIMEOUT_MS from 1 s to 10 min, refusing anything else', () => {
    expect(validateEnvironment({ HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000' })).toMatchObject({
      HTTP_KEEP_ALIVE_TIMEOUT_MS: 65000,
    });
    for (const raw of ['999', '600001', '5s', '-1']) {
      expect(() => validateEnvironment({ HTTP_KEEP_ALIVE_TIMEOUT_MS: raw })).toThrow(
        /HTTP_KEEP_ALIVE_TIMEOUT_MS must be an integer from 1000 to 600000/,
      );
    }
  });

  it('takes TOKEN_TTL_SECONDS from 60 s to one year (docs/contract.md §3), refusing anything else', () => {
    for (const raw of ['60', '31536000']) {
      expect(validateEnvironment({ TOKEN_TTL_SECONDS: raw }).TOKEN_TTL_SECONDS).toBe(Number(raw));
    }
    for (const raw of ['59', '31536001', '1y']) {
      expect(() => validateEnvironment({ TOKEN_TTL_SECONDS: raw })).toThrow(
        /TOKEN_TTL_SECONDS must be an integer from 60 to 31536000/,
      );
    }
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

  it('coerces numbers from strings', () => {
    expect(validateEnvironment({ PORT: '8080' }).PORT).toBe(8080);
  });

  it.each([
    ['false', false],
    ['0', false],
    ['1', 1],
    ['2', 2],
    ['10.0.0.1', ['10.0.0.1']],
    ['10.0.0.0/8, 127.0.0.1,::1,fd00::/8', ['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']],
    ['loopback,192.168.1.0/24', ['loopback', '192.168.1.0/24']],
  ])('reads TRUST_PROXY=%s as Fastify trustProxy %o', (raw, expected) => {
    expect(validateEnvironment({ TRUST_PROXY: raw }).TRUST_PROXY).toEqual(expected);
  });

  it.each([
    [
      'true',
      /^Invalid configuration: TRUST_PROXY=true would believe any X-Forwarded-For .*write false, the number of proxies in front of the service \(e\.g\. 1\), or their addresses or CIDR ranges \(e\.g\. 10\.0\.0\.0\/8,127\.0\.0\.1\) \(got "true"\)$/,
    ],
    ['10.0.0.0/33', /TRUST_PROXY: "10\.0\.0\.0\/33" is not an address or CIDR range; write false/],
    ['10.0.0.1,proxy.example', /TRUST_PROXY: "proxy\.example" is not an address or CIDR range/],
    ['-1', /TRUST_PROXY: "-1" is not an address/],
    ['yes', /TRUST_PROXY: "yes" is not an address/],
  ])('refuses TRUST_PROXY=%s saying what to write instead', (raw, message) => {
    expect(() => validateEnvironment({ TRUST_PROXY: raw })).toThrow(message);
  });

  it.each([
    ['DATABASE_URL', 'mysql://u:DbPw_S3cret@h/x', '(got "mysql://u:*****@h/x")'],
    ['REDIS_URL', 'http://:RedisPw_Secret@x', '(got "http://:*****@x")'],
  ])('never shows the password of a refused %s', (name, value, shown) => {
    let message = '';
    try {
      validateEnvironment({ [name]: value });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(shown);
    expect(message).not.toMatch(/Secret|S3cret/);
  });

  it.each([
    [
      { PORT: 'abc' },
      /^Invalid configuration: PORT must be an integer from 1 to 65535 \(got "abc"\)$/,
    ],
    [{ PORT: '70000' }, /PORT must be an integer from 1 to 65535/],
    [{ DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be sqlite:<path>/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of fatal, error/],
    [
      { SQLITE_LOCK_TIMEOUT_MS: '50' },
      /SQLITE_LOCK_TIMEOUT_MS must be an integer from 100 to 60000/,
    ],
    [{ TOKEN_SIGNING_KEY: 'not a pem' }, /TOKEN_SIGNING_KEY must be a PEM private key/],
    [{ REDIS_URL: 'localhost:6379' }, /REDIS_URL must be redis:\/\/host:port/],
    [
      { REDIS_URL: 'redis://localhost:6379/cache' },
      /REDIS_URL must be redis:\/\/host:port\[\/db\]/,
    ],
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
