import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { IncomingHttpHeaders } from 'node:http';
import { Strategy } from 'passport-http-bearer';
import type { Principal } from '../principal.js';
import { TokenVerifier } from '../token-verifier.service.js';

/** passport-http-bearer, backed by the TokenVerifier (signature, expiry, revocation, client). */
@Injectable()
export class BearerStrategy extends PassportStrategy(Strategy, 'bearer') {
  constructor(private readonly verifier: TokenVerifier) {
    super({ realm: 'api' });
  }

  /**
   * RFC 6750 §2.1 only (docs/contract.md §4): passport-http-bearer would also take `access_token` from the
   * query string or the body, where tokens leak into logs and caches, so it is shown the
   * Authorization header alone. A token sent elsewhere is as good as none.
   */
  override authenticate(req: { headers: IncomingHttpHeaders }, options?: object) {
    const headerOnly = { headers: { authorization: req.headers.authorization } };
    super.authenticate(headerOnly as never, options);
  }

  async validate(token: string): Promise<Principal | false> {
    return (await this.verifier.verify(token)) ?? false;
  }
}
