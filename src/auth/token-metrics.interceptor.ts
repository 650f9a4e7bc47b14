import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { type Observable, tap } from 'rxjs';
import { ValidationFailedException } from '../common/exceptions/api.exception.js';
import { repeatedKeys } from '../common/parsers/body-parsers.js';
import { Metrics } from '../metrics/metrics.service.js';
import { isGrantType } from './grant-types.js';
import { OAuthException, TooManyAttemptsException } from './oauth.exceptions.js';

/**
 * Counts the token endpoint's answers by grant type: issued, or refused by RFC 6749 error (the
 * parameters' validation included, which runs before the handler).
 */
@Injectable()
export class TokenMetricsInterceptor implements NestInterceptor {
  constructor(private readonly metrics: Metrics) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const grantType = grantLabel(context.switchToHttp().getRequest<FastifyRequest>().body);
    return next.handle().pipe(
      tap({
        next: () => this.metrics.tokenIssued(grantType),
        error: (error: unknown) => this.metrics.tokenRefused(grantType, refusal(error)),
      }),
    );
  }
}

/** The caller chooses grant_type: only known ones become a label value. */
function grantLabel(body: unknown): string {
  const sent =
    typeof body === 'object' && body !== null && !repeatedKeys(body).has('grant_type')
      ? (body as { grant_type?: unknown }).grant_type
      : undefined;
  if (typeof sent !== 'string' || sent === '') return 'none';
  return isGrantType(sent) ? sent : 'other';
}

function refusal(error: unknown): string {
  if (error instanceof OAuthException) return error.error;
  // The global pipe's refusal of the parameters, answered as invalid_request (asOAuthError()).
  if (error instanceof ValidationFailedException) return 'invalid_request';
  return error instanceof TooManyAttemptsException ? 'throttled' : 'server_error';
}
