import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';

/**
 * Every Authorization header of the request, in the order sent. Node keeps only the first in
 * `headers.authorization`; the raw list shows them all, so that two can be refused.
 */
export const AuthorizationHeaders = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): string[] => {
    const { rawHeaders } = ctx.switchToHttp().getRequest<FastifyRequest>().raw;
    const values: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
      if (rawHeaders[i].toLowerCase() === 'authorization') values.push(rawHeaders[i + 1]);
    }
    return values;
  },
);
