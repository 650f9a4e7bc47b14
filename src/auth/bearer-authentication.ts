import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { ApiException } from '../common/exceptions/api.exception.js';
import { authorizationHeaders } from './authorization-headers.js';
import type { Principal } from './principal.js';
import type { Scope } from './scopes.js';
import { TokenVerifier } from './token-verifier.service.js';

/** Fastify route config entry set by @RequireScopes(): the scopes the route's bearer token needs. */
export const BEARER_ROUTE = 'bearerScopes';

declare module 'fastify' {
  interface FastifyContextConfig {
    [BEARER_ROUTE]?: readonly Scope[];
  }
}

/** 401 with RFC 6750's challenge: a bare one without a token, `invalid_token` for a bad one. */
export class UnauthenticatedException extends ApiException {
  readonly status = 401;
  constructor(invalidToken: boolean) {
    super(invalidToken ? 'The access token is invalid, expired or revoked.' : 'Unauthenticated.');
    this.headers['WWW-Authenticate'] = invalidToken
      ? 'Bearer realm="api", error="invalid_token"'
      : 'Bearer realm="api"';
  }
}

/** Two Authorization headers (CONTRACT §4): ambiguous, so neither is believed. */
export class RepeatedAuthorizationException extends ApiException {
  readonly status = 400;
  constructor() {
    super('The request must carry one Authorization header, not several.');
    this.headers['WWW-Authenticate'] = 'Bearer realm="api", error="invalid_request"';
  }
}

/** 403 with RFC 6750's challenge naming the scopes the route needs. */
export class InsufficientScopeException extends ApiException {
  readonly status = 403;
  constructor(scopes: readonly Scope[]) {
    super('The token does not grant the scope this action needs.');
    this.headers['WWW-Authenticate'] =
      `Bearer realm="api", error="insufficient_scope", scope="${scopes.join(' ')}"`;
  }
}

/** What authentication decided for a request, kept on it for the guard. */
const DECISION = Symbol('bearer-decision');
type Decision = { principal: Principal } | { error: unknown };
type DecidedRequest = FastifyRequest & { [DECISION]?: Decision };

/**
 * Who is calling, from `Authorization: Bearer <token>` only (RFC 6750 §2.1; a token in the query
 * or body is as good as none), and whether the token grants the route's scopes. The one place
 * that decides both:
 *
 * - it runs as a Fastify `onRequest` hook on routes marked by @RequireScopes(), so that a
 *   request without a valid token (401) or without the scope (403) is answered before its body
 *   is read or parsed (CONTRACT §2: the token, then the scope, then the resource, then the body);
 * - the bearer guard then takes the decision from the request.
 */
@Injectable()
export class BearerAuthentication implements OnModuleInit {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit() {
    // A CLI application context has no HTTP server.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.addHook('onRequest', (request, reply, done) => this.beforeBody(request, reply, done));
  }

  /**
   * The principal of the request's token, which grants the route's scopes (synchronously when the
   * decision is already made, as it is on every route marked by @RequireScopes()); throws the
   * 401, 403 (or 400) to answer otherwise.
   */
  principalOf(request: FastifyRequest): Principal | Promise<Principal> {
    const decided = (request as DecidedRequest)[DECISION];
    if (!decided) return this.authorize(request, request.routeOptions.config?.[BEARER_ROUTE] ?? []);
    if ('error' in decided) throw decided.error;
    return decided.principal;
  }

  /** Callback style, so that a token found in the verifier's cache costs no promise. */
  private beforeBody(request: FastifyRequest, reply: FastifyReply, done: () => void) {
    const scopes = request.routeOptions.config?.[BEARER_ROUTE];
    if (!scopes) return done();
    const decide = (decision: Decision) => ((request as DecidedRequest)[DECISION] = decision);
    const refuse = (error: unknown) => {
      decide({ error });
      if (!(error instanceof ApiException)) return done(); // e.g. the database: via the guard
      void reply.headers(error.headers).code(error.status).send(error.body());
    };
    let outcome: Principal | Promise<Principal>;
    try {
      outcome = this.authorize(request, scopes);
    } catch (error) {
      return refuse(error);
    }
    if (!(outcome instanceof Promise)) {
      decide({ principal: outcome });
      return done();
    }
    outcome.then((principal) => {
      decide({ principal });
      done();
    }, refuse);
  }

  /** The request's principal, if its token grants every one of `scopes`. */
  private authorize(
    request: FastifyRequest,
    scopes: readonly Scope[],
  ): Principal | Promise<Principal> {
    const outcome = this.authenticate(request);
    return outcome instanceof Promise
      ? outcome.then((principal) => granting(principal, scopes))
      : granting(outcome, scopes);
  }

  private authenticate(request: FastifyRequest): Principal | Promise<Principal> {
    const authorization = singleAuthorization(request.raw);
    const cached = this.verifier.fromCache(authorization, request.raw.socket);
    if (cached) return cached;
    const token = bearerToken(authorization);
    if (token === undefined) throw new UnauthenticatedException(false);
    if (token === null) throw new UnauthenticatedException(true);
    return this.verifier.verify(token).then((principal) => {
      if (!principal) throw new UnauthenticatedException(true);
      return principal;
    });
  }
}

function granting(principal: Principal, scopes: readonly Scope[]): Principal {
  if (!scopes.every((scope) => principal.scopes.includes(scope))) {
    throw new InsufficientScopeException(scopes);
  }
  return principal;
}

/** The one Authorization header of the request, if any; two are refused. */
function singleAuthorization(raw: IncomingMessage): string | undefined {
  const [authorization, another] = authorizationHeaders(raw);
  if (another !== undefined) throw new RepeatedAuthorizationException();
  return authorization;
}

/**
 * The token of a Bearer header as passport-http-bearer reads it: undefined when there is none
 * (no header, another scheme), null when the header is malformed (not two space-separated
 * parts), which is refused as an invalid token.
 */
function bearerToken(authorization: string | undefined): string | null | undefined {
  if (!authorization) return undefined;
  const parts = authorization.split(' ');
  if (parts.length !== 2) return null;
  return /^Bearer$/i.test(parts[0]) && parts[1] ? parts[1] : undefined;
}
