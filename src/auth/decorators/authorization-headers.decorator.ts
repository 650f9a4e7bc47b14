import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { authorizationHeaders } from '../authorization-headers.js';

/** Every Authorization header of the request, in the order sent (authorizationHeaders()). */
export const AuthorizationHeaders = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): string[] =>
    authorizationHeaders(ctx.switchToHttp().getRequest<FastifyRequest>().raw),
);
