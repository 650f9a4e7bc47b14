import { ExecutionContext, Injectable } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import passport from 'passport';
import type { FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { authorizationHeaders } from '../authorization-headers.js';
import {
  InsufficientScopeException,
  RepeatedAuthorizationException,
  UnauthenticatedException,
} from '../bearer.exceptions.js';
import type { Principal } from '../principal.js';
import type { Scope } from '../scopes.js';
import type { BearerRequest } from '../strategies/bearer.strategy.js';

/**
 * Fastify route config entry set by @RequireScopes(): the scopes the route's token needs. In the
 * route's config rather than Nest metadata alone, because two readers run outside Nest's
 * pipeline: the header check before the body (BearerHeaderCheck) and the exception filter,
 * which runs this guard before answering a body Fastify refused (docs/contract.md §2).
 */
export const BEARER_SCOPES = 'bearerScopes';

declare module 'fastify' {
  interface FastifyContextConfig {
    [BEARER_SCOPES]?: readonly Scope[];
  }
  interface FastifyRequest {
    /** The token's principal, set by BearerAuthGuard; read with @CurrentPrincipal(). */
    user?: Principal;
  }
}

/**
 * passport's bearer guard (the 'bearer' strategy: BearerStrategy) plus the route's scopes:
 * 401 without a valid token, 403 without the scopes, else `request.user` is the token's
 * Principal. Apply it with @RequireScopes().
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard('bearer') {
  /**
   * passport.authenticate('bearer') as AuthGuard's canActivate() runs it (the strategy's
   * authenticate() on getRequest(), its outcome through handleRequest()), with one difference
   * in how the strategy is called. passport's middleware gives each request
   * `Object.create(strategy)` with five new closures as its success/fail/error/pass/redirect;
   * here each request gets an Attempt, whose prototype is the same registered strategy and whose
   * methods are shared. Measured with --trace-gc over 20,000 cached-token GETs: 7 to 10 full
   * GCs with passport's middleware (its per-request objects were promoted to the old heap),
   * none this way (docs/benchmarks.md). The options AuthGuard would merge are its defaults (no
   * session, no redirect), which the bearer strategy does not read.
   */
  override canActivate(context: ExecutionContext): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const attempt = new (attemptOf(STRATEGY))(this, context, resolve, reject);
      attempt.authenticate(this.getRequest(context), {});
    });
  }

  override getRequest(context: ExecutionContext): BearerRequest {
    const { raw } = context.switchToHttp().getRequest<FastifyRequest>();
    return { headers: { authorization: singleAuthorization(raw) }, socket: raw.socket };
  }

  /**
   * passport's outcome in the contract's answers (its own challenges are never sent): an error
   * (e.g. the database) goes to the exception filter as it is; a missing or refused token is
   * 401 with RFC 6750's challenge; a token without the route's scopes is 403.
   */
  override handleRequest<T = Principal>(
    error: unknown,
    principal: Principal | false | null,
    challenge: unknown,
    context: ExecutionContext,
    status?: unknown,
  ): T {
    if (error) throw error;
    if (!principal) {
      // passport-http-bearer: status 400 for a header that is not two words, a challenge with
      // error="invalid_token" for a token the strategy refused, a bare challenge for no token.
      const invalid =
        status === 400 || (typeof challenge === 'string' && challenge.includes('invalid_token'));
      throw new UnauthenticatedException(invalid);
    }
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const scopes = request.routeOptions.config[BEARER_SCOPES] ?? [];
    for (const scope of scopes) {
      if (!principal.scopes.includes(scope)) throw new InsufficientScopeException(scopes);
    }
    request.user = principal;
    return principal as T;
  }
}

const STRATEGY = 'bearer';

/** The passport strategy API an Attempt answers (passport-strategy's augmented instance). */
interface StrategyCall {
  authenticate(request: unknown, options: object): void;
}

type AttemptClass = new (
  guard: BearerAuthGuard,
  context: ExecutionContext,
  resolve: (allowed: boolean) => void,
  reject: (refusal: unknown) => void,
) => StrategyCall;

const attempts = new WeakMap<object, AttemptClass>();

/**
 * The class of one authentication by the strategy registered as `name`: the strategy is its
 * prototype (as passport's Object.create(strategy) is), and success(), fail() and error() (the
 * calls passport-strategy documents) settle the guard's answer through handleRequest().
 */
function attemptOf(name: string): AttemptClass {
  const strategy = (passport as unknown as { _strategy(name: string): object })._strategy(name);
  let Attempt = attempts.get(strategy);
  if (!Attempt) {
    class StrategyAttempt {
      constructor(
        private readonly guard: BearerAuthGuard,
        private readonly context: ExecutionContext,
        private readonly resolve: (allowed: boolean) => void,
        private readonly reject: (refusal: unknown) => void,
      ) {}

      success(principal: Principal) {
        this.settle(null, principal, undefined, undefined);
      }

      fail(challenge?: unknown, status?: unknown) {
        if (typeof challenge === 'number') [status, challenge] = [challenge, undefined];
        this.settle(null, false, challenge, status);
      }

      error(error: unknown) {
        this.settle(error, false, undefined, undefined);
      }

      private settle(
        error: unknown,
        principal: Principal | false,
        challenge: unknown,
        status: unknown,
      ) {
        try {
          this.guard.handleRequest(error, principal, challenge, this.context, status);
          this.resolve(true);
        } catch (refusal) {
          this.reject(refusal);
        }
      }
    }
    Object.setPrototypeOf(StrategyAttempt.prototype, strategy);
    Attempt = StrategyAttempt as unknown as AttemptClass;
    attempts.set(strategy, Attempt);
  }
  return Attempt;
}

/**
 * The one Authorization header of the request, if any; two are refused. Its scheme and
 * credentials come one space apart, as passport-http-bearer reads them: RFC 6750 §2.1 allows
 * several (`"Bearer" 1*SP b64token`).
 */
export function singleAuthorization(raw: IncomingMessage): string | undefined {
  const [authorization, another] = authorizationHeaders(raw);
  if (another !== undefined) throw new RepeatedAuthorizationException();
  return authorization?.includes('  ') ? authorization.replace(/^(\S+) +/, '$1 ') : authorization;
}
