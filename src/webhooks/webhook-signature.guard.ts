import {
  applyDecorators,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Injectable,
  type RawBodyRequest,
  UseGuards,
} from '@nestjs/common';
import { ApiHeader, ApiServiceUnavailableResponse, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.js';
import { ErrorDto } from '../common/openapi/error.dto.js';
import { KeepRawBody } from '../common/parsers/raw-body.js';
import { guardBeforeBody } from '../common/resource-first.js';
import { WebhookSignatures } from './webhook-signatures.service.js';

type SignedRequest = RawBodyRequest<FastifyRequest> & { user: Principal };

/**
 * Standard Webhooks signatures for the clients that have a signing secret (docs/contract.md §6);
 * the others pass untouched. Runs after the bearer guard (it needs the client) and before the
 * body's validation pipe: token, scope, signature, body.
 */
@Injectable()
export class WebhookSignatureGuard implements CanActivate {
  constructor(private readonly signatures: WebhookSignatures) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<SignedRequest>();
    if (this.signatures.verify(request.user.clientId, request.headers, request.rawBody)) {
      signedDeliveries.add(request);
    }
    return true;
  }
}

/** The requests whose signature WebhookSignatureGuard verified. */
const signedDeliveries = new WeakSet<object>();

/**
 * Whether the delivery was signed and its signature verified (a parameter decorator). Its
 * `webhook-id` is then the one key that identifies it: an unsigned header such as
 * Idempotency-Key may be changed by whoever replays it.
 */
export const SignedDelivery = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  signedDeliveries.has(context.switchToHttp().getRequest<object>()),
);

/**
 * The part of the check that needs no body: the client's secrets usable (503), the three headers
 * present, well-formed and fresh (401). Run ahead of the body where one is refused or large
 * (BeforeBodyChecks, after the bearer guard), so that a delivery without its signature is 401 at
 * once, not 413 or a wait for memory.
 */
@Injectable()
export class WebhookSignatureHeadersGuard implements CanActivate {
  constructor(private readonly signatures: WebhookSignatures) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<SignedRequest>();
    this.signatures.verifyHeaders(request.user.clientId, request.headers);
    return true;
  }
}

/**
 * The signature check on a route, with its raw body kept and its OpenAPI headers. Place it above
 * @RequireScopes(): guards declared higher run later, and this one needs the token's client.
 */
export function VerifyWebhookSignature() {
  return applyDecorators(
    KeepRawBody(),
    UseGuards(WebhookSignatureGuard),
    guardBeforeBody(WebhookSignatureHeadersGuard),
    ApiHeader({
      name: 'webhook-id',
      required: false,
      description:
        "The delivery's id (Standard Webhooks); identifies it across retries like Idempotency-Key. Required, and signed, for a client with a signing secret.",
    }),
    ApiHeader({
      name: 'webhook-timestamp',
      required: false,
      description:
        'Unix time in seconds when the delivery was signed; refused more than 5 minutes from the server clock. Required for a client with a signing secret.',
    }),
    ApiHeader({
      name: 'webhook-signature',
      required: false,
      description:
        'Space-separated `v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">` signatures, any one by a live secret of the client (clients:webhook-secret). Required for a client with a signing secret.',
    }),
    ApiUnauthorizedResponse({
      type: ErrorDto,
      // Joined by @nestjs/swagger to @RequireScopes()' description of the same status.
      description:
        'For a client with a signing secret, also: a webhook signature missing, malformed, stale or wrong (`WWW-Authenticate: WebhookSignature realm="webhooks"`).',
    }),
    ApiServiceUnavailableResponse({
      type: ErrorDto,
      description:
        "The database cannot be reached; or the client's signing secrets cannot be decrypted (WEBHOOK_SECRET_KEY missing or changed on this instance: logged).",
    }),
  );
}
