import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Principal } from '../principal.js';

export const CurrentPrincipal = createParamDecorator(
  (_data: unknown, ctx: ExecutionContext): Principal =>
    ctx.switchToHttp().getRequest<{ user: Principal }>().user,
);
