import { Injectable } from '@nestjs/common';
import { AccessTokenService } from './access-tokens.service.js';
import { ClientsService } from './clients.service.js';
import { isGrantType } from './grant-types.js';
import type { ClientCredentials } from './oauth-request.js';
import {
  InvalidScopeException,
  UnauthorizedClientException,
  UnsupportedGrantTypeException,
} from './oauth.exceptions.js';
import { isScope, type Scope } from './scopes.js';
import { UsersService } from './users.service.js';
import type { TokenResponseDto } from './dto/token-response.dto.js';

export interface TokenRequest {
  grantType: string;
  scope: string;
  username?: string;
  password?: string;
}

/** POST /oauth/token once the request is well-formed: client, grant, scope, then the user. */
@Injectable()
export class TokenGrantService {
  constructor(
    private readonly clients: ClientsService,
    private readonly users: UsersService,
    private readonly tokens: AccessTokenService,
  ) {}

  /** `address`: the caller's, which failure limits are counted by. */
  async grant(
    request: TokenRequest,
    credentials: ClientCredentials,
    address: string,
  ): Promise<TokenResponseDto> {
    const client = await this.clients.authenticate(credentials, address);
    const { grantType } = request;
    if (!isGrantType(grantType)) throw new UnsupportedGrantTypeException();
    if (!client.grants.includes(grantType)) {
      throw new UnauthorizedClientException(`This client may not use the ${grantType} grant.`);
    }
    // Every requested scope must be allowed: refused, never silently narrowed.
    const scopes = parseScope(request.scope);
    if (!scopes || !scopes.every((scope) => client.scopes.includes(scope))) {
      throw new InvalidScopeException();
    }

    let subject = client.id;
    if (grantType === 'password') {
      const user = await this.users.authenticate(request.username!, request.password!, address);
      subject = String(user.id);
    }
    const accessToken = await this.tokens.sign({ clientId: client.id, subject, scopes });
    return {
      token_type: 'Bearer',
      expires_in: String(this.tokens.ttlSeconds),
      access_token: accessToken,
    };
  }
}

/** RFC 6749 §3.3 space-delimited scope list; null when empty or naming an unknown scope. */
function parseScope(scope: string): Scope[] | null {
  const names = scope.split(' ').filter(Boolean);
  if (names.length === 0 || !names.every(isScope)) return null;
  return [...new Set(names)];
}
