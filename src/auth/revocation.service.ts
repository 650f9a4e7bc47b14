import { Injectable } from '@nestjs/common';
import { AccessTokenService, type AccessTokenClaims } from './access-tokens.service.js';
import { NotOurTokenException, UnauthorizedClientException } from './oauth.exceptions.js';
import { TokenStateService } from './token-state.service.js';
import { TokenVerifier } from './token-verifier.service.js';

@Injectable()
export class RevocationService {
  constructor(
    private readonly tokens: AccessTokenService,
    private readonly state: TokenStateService,
    private readonly verifier: TokenVerifier,
  ) {}

  /**
   * RFC 7009 for an authenticated client. A token that is not ours, malformed or already expired
   * needs no revoking (§2.2: still a success); a token of another client is refused and stays valid.
   */
  async revokeForClient(token: string, callerClientId: string): Promise<void> {
    const claims = await this.tokens.decode(token);
    if (!claims) return;
    if (claims.client_id !== callerClientId) {
      throw new UnauthorizedClientException('The token was not issued to this client.');
    }
    await this.record(token, claims);
  }

  /** Operator revocation (CLI): any token our keys signed that has not expired, whatever its issuer. */
  async revoke(token: string): Promise<AccessTokenClaims> {
    const claims = await this.tokens.decode(token, { anyIssuer: true });
    if (!claims) throw new NotOurTokenException();
    await this.record(token, claims);
    return claims;
  }

  private async record(token: string, claims: AccessTokenClaims) {
    await this.state.revoke(claims);
    this.verifier.forget(token);
  }
}
