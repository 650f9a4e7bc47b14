import { Injectable, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiException } from '../common/exceptions/api.exception.js';
import { RepeatedAuthorizationException, UnauthenticatedException } from './bearer.exceptions.js';
import { BEARER_SCOPES, singleAuthorization } from './guards/bearer-auth.guard.js';

/**
 * docs/contract.md §2: a request to a route of @RequireScopes() whose Authorization header is
 * missing, repeated or not a well-formed Bearer header is refused before its body is read.
 *
 * Only that syntactic check runs here, in a Fastify `onRequest` hook (before the body); the
 * token itself is verified by passport in BearerAuthGuard, where NestJS developers expect it.
 * A well-formed header whose token turns out bad, sent with a body Fastify refuses (malformed,
 * over 1 MiB, wrong content type), still gets its 401 first: the exception filter runs the
 * guard before it answers such a body, as a large body's parser does before it waits for memory
 * (BeforeBodyChecks). Running passport itself here, before
 * the body, was the other way: it would take the decision out of the guard (which would only
 * read it) and would need Nest middleware, i.e. @fastify/middie's hook on every request.
 */
@Injectable()
export class BearerHeaderCheck implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit() {
    // A CLI application context has no HTTP server.
    const fastify = this.adapterHost.httpAdapter?.getInstance<FastifyInstance>();
    fastify?.addHook('onRequest', refuseIllFormed);
  }
}

function refuseIllFormed(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  if (!request.routeOptions.config[BEARER_SCOPES]) return done();
  const refusal = headerRefusal(request);
  if (!refusal) return done();
  void reply.headers(refusal.headers).code(refusal.status).send(refusal.body());
}

/**
 * What passport-http-bearer would answer without looking at the token: no header or another
 * scheme is a missing token, a header that is not two space-separated words an invalid one.
 */
function headerRefusal(request: FastifyRequest): ApiException | undefined {
  let authorization: string | undefined;
  try {
    authorization = singleAuthorization(request.raw);
  } catch (error) {
    return error as RepeatedAuthorizationException;
  }
  if (!authorization) return new UnauthenticatedException(false);
  const space = authorization.indexOf(' ');
  if (space === -1 || authorization.indexOf(' ', space + 1) !== -1) {
    return new UnauthenticatedException(true);
  }
  const bearer = space === 6 && /^bearer$/i.test(authorization.slice(0, 6));
  return bearer && space < authorization.length - 1
    ? undefined
    : new UnauthenticatedException(false);
}
