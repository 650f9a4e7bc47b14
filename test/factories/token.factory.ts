import { createHmac, generateKeyPairSync } from 'node:crypto';
import { importPKCS8, SignJWT, type JWTPayload } from 'jose';
import request from 'supertest';
import type { TestApp } from '../support/app.js';

const b64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The service's own signing key, read from the database as an attacker never could. */
export async function serviceSigningKey(t: TestApp) {
  const [row]: { kid: string; private_key: string }[] = await t.db.query(
    "SELECT kid, private_key FROM oauth_signing_keys WHERE slot = 'signing'",
  );
  return { kid: row.kid, key: await importPKCS8(row.private_key, 'EdDSA') };
}

/** Claims like the service's, for `clientId`, valid for an hour; override any of them. */
export function claimsFor(clientId: string, overrides: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return {
    iss: 'http://localhost:3000',
    aud: 'api',
    sub: clientId,
    client_id: clientId,
    scope: 'customers:read',
    jti: `forged-${Math.random().toString(36).slice(2)}`,
    iat: now,
    exp: now + 3600,
    ...overrides,
  };
}

/** A token signed with the service's real key but with chosen claims and header fields. */
export async function signWithServiceKey(
  t: TestApp,
  claims: JWTPayload,
  header: { typ?: string; kid?: string } = {},
) {
  const { kid, key } = await serviceSigningKey(t);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid, ...header })
    .sign(key);
}

/** The forgeries of the issue's list, each for otherwise valid claims of `clientId`. */
export async function forgeries(t: TestApp, clientId: string, validToken: string) {
  const { kid } = await serviceSigningKey(t);
  const claims = claimsFor(clientId);
  const now = Math.floor(Date.now() / 1000);

  const unsigned = `${b64url({ alg: 'none', typ: 'at+jwt', kid })}.${b64url(claims)}.`;

  // The classic key-confusion attack: HMAC keyed with the published public key.
  const { keys } = (await request(t.http).get('/.well-known/jwks.json')).body as {
    keys: { x: string }[];
  };
  const hsInput = `${b64url({ alg: 'HS256', typ: 'at+jwt', kid })}.${b64url(claims)}`;
  const hmacWith = (secret: string) =>
    `${hsInput}.${createHmac('sha256', secret).update(hsInput).digest('base64url')}`;

  const stranger = generateKeyPairSync('ed25519').privateKey;
  const strangerKey = await importPKCS8(
    stranger.export({ format: 'pem', type: 'pkcs8' }).toString(),
    'EdDSA',
  );
  const signWithStranger = (kidHeader: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'EdDSA', typ: 'at+jwt', kid: kidHeader })
      .sign(strangerKey);

  const [h, p, s] = validToken.split('.');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  const tampered = `${h}.${b64url({ ...payload, scope: `${payload.scope} customers:write` })}.${s}`;

  return {
    'alg none': unsigned,
    'HS256 keyed with the public JWK': hmacWith(JSON.stringify(keys[0])),
    'HS256 keyed with the public x': hmacWith(keys[0].x),
    'an unknown kid': await signWithStranger('not-our-key'),
    'our kid, signed by another key': await signWithStranger(kid),
    'a foreign issuer': await signWithServiceKey(t, { ...claims, iss: 'https://evil.example' }),
    'a foreign audience': await signWithServiceKey(t, { ...claims, aud: 'another-api' }),
    'typ JWT instead of at+jwt': await signWithServiceKey(t, claims, { typ: 'JWT' }),
    'expired (beyond the 5 s leeway)': await signWithServiceKey(t, {
      ...claims,
      iat: now - 3600,
      exp: now - 6,
    }),
    'a tampered payload': tampered,
    'a truncated signature': validToken.slice(0, -4),
    'no client_id claim': await signWithServiceKey(t, { ...claims, client_id: undefined }),
    'a client that does not exist': await signWithServiceKey(
      t,
      claimsFor('00000000-0000-4000-8000-000000000000'),
    ),
    garbage: 'not.a.jwt',
  };
}
