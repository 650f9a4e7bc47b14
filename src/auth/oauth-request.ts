import { InvalidClientException, InvalidRequestException } from './oauth.exceptions.js';

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Whether HTTP Basic carried them (then a refusal carries a Basic challenge). */
  usedBasic: boolean;
}

/**
 * Client authentication (RFC 6749 §2.3.1): HTTP Basic (`client_secret_basic`) or `client_id` +
 * `client_secret` in the body (`client_secret_post`), never both. `authorizations`: every
 * Authorization header of the request; two are ambiguous, so neither is believed (as on /v2,
 * docs/contract.md §4).
 */
export function readClientCredentials(
  authorizations: readonly string[],
  params: Partial<Record<'client_id' | 'client_secret', string>>,
): ClientCredentials {
  if (authorizations.length > 1) {
    throw new InvalidRequestException(
      'The request must carry one Authorization header, not several.',
    );
  }
  const authorization = authorizations[0];
  if (authorization !== undefined) {
    const basic = parseBasic(authorization);
    if (
      params.client_secret !== undefined ||
      (params.client_id !== undefined && params.client_id !== basic.clientId)
    ) {
      throw new InvalidRequestException(
        'Send the client credentials either with HTTP Basic or in the body, not both.',
      );
    }
    return basic;
  }
  // RFC 6749 §5.2: no client authentication at all is invalid_client, like a wrong one.
  if (params.client_id === undefined || params.client_secret === undefined) {
    throw new InvalidClientException(false);
  }
  return { clientId: params.client_id, clientSecret: params.client_secret, usedBasic: false };
}

function parseBasic(header: string): ClientCredentials {
  const match = /^Basic +([A-Za-z0-9+/]+=*) *$/i.exec(header);
  // Another scheme, or a malformed Basic header: an unsupported authentication method (§5.2).
  if (!match) throw new InvalidClientException(true);
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) throw new InvalidClientException(true);
  try {
    // RFC 6749 §2.3.1: both halves are form-urlencoded before they are joined.
    const clientId = formDecode(decoded.slice(0, colon));
    const clientSecret = formDecode(decoded.slice(colon + 1));
    if (!clientSecret) throw new InvalidClientException(true);
    return { clientId, clientSecret, usedBasic: true };
  } catch {
    throw new InvalidClientException(true);
  }
}

function formDecode(value: string) {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}
