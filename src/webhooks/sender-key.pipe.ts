import {
  type ArgumentMetadata,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  PipeTransform,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ValidationFailedException } from '../common/exceptions/api.exception.js';

/** The headers a sender may name a delivery by, as docs/contract.md §6 spells them. */
export const SENDER_KEY_HEADERS = {
  'idempotency-key': 'Idempotency-Key',
  'webhook-id': 'webhook-id',
};

/** docs/contract.md §6: a sender's key is 1–255 characters of visible ASCII. */
export const SENDER_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const SENDER_KEY = new RegExp(SENDER_KEY_PATTERN);

/**
 * One request header, as `@Headers(name)` gives it, but taking pipes (Nest's `@Headers` takes
 * none): `@SenderKeyHeader('webhook-id', SenderKeyPipe)`.
 */
export const SenderKeyHeader = createParamDecorator(
  (name: keyof typeof SENDER_KEY_HEADERS, context: ExecutionContext): unknown =>
    context.switchToHttp().getRequest<FastifyRequest>().headers[name],
);

/**
 * Checks an `Idempotency-Key` or `webhook-id` header (`@SenderKeyHeader(name, SenderKeyPipe)`): absent
 * is fine, anything but 1–255 visible ASCII characters is 422 naming the header (a key is
 * stored, so its size is bounded; a repeated header arrives joined with ", " and is refused).
 */
@Injectable()
export class SenderKeyPipe implements PipeTransform<unknown, string | undefined> {
  transform(value: unknown, { data }: ArgumentMetadata): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value === 'string' && SENDER_KEY.test(value)) return value;
    const header =
      SENDER_KEY_HEADERS[String(data).toLowerCase() as keyof typeof SENDER_KEY_HEADERS] ??
      String(data);
    throw new ValidationFailedException({
      [header]: [`The ${header} header must be 1 to 255 visible ASCII characters.`],
    });
  }
}
