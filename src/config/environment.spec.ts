import { InvalidEnvironmentError, validateEnvironment } from './environment.js';

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
    });
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
    [
      { SQLITE_LOCK_TIMEOUT_MS: '50' },
      /SQLITE_LOCK_TIMEOUT_MS must be an integer from 100 to 60000/,
    ],
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
