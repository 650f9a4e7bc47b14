import {
  type ArgumentMetadata,
  createParamDecorator,
  type ExecutionContext,
  Injectable,
  PipeTransform,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { validateSync } from 'class-validator';
import { ValidationFailedException } from '../common/exceptions/api.exception.js';
import {
  bodyObject,
  mergeFieldErrors,
  unstorableTextErrors,
  splitUnknownFields,
} from '../common/pipes/dto-fields.js';
import { toFieldErrors } from '../common/pipes/validation.pipe.js';
import { WebhookDeliveryDto } from './dto/webhook-delivery.dto.js';
import { checkPayload } from './webhook-payload.js';
import { type RegisteredWebhook, WebhookRegistry } from './webhook-registry.js';

/** A delivery that passed validation: its event's handler, the typed payload, and the raw one. */
export interface ValidDelivery {
  webhook: RegisteredWebhook;
  /** The event's payload DTO instance, handed to the handler. */
  payload: object;
  /** The payload as received (unknown fields included), which is what gets stored. */
  raw: Record<string, unknown>;
}

/**
 * Validates POST /v2/webhooks' body in one pass, so that a 422 names every bad field: the
 * envelope (`event`, `payload`, unknown top-level fields) and then the payload against the DTO
 * of the event's handler (`payload.<field>`). It replaces the global pipe for this body (the
 * parameter is typed with an interface, which the global pipe leaves alone) because that pipe
 * would refuse the unknown payload fields senders are allowed to add.
 */
@Injectable()
export class WebhookDeliveryPipe implements PipeTransform<unknown, Promise<ValidDelivery>> {
  constructor(private readonly registry: WebhookRegistry) {}

  async transform(body: unknown): Promise<ValidDelivery> {
    // Unknown top-level keys (by own-property lookup, so `constructor` or `toString` too) and
    // text that cannot be stored anywhere, the payload's unknown fields included: those are stored.
    const { known, errors: unknown } = splitUnknownFields(WebhookDeliveryDto, bodyObject(body));
    // A flat DTO (synchronous rules only): validated without a promise round.
    const envelope = Object.assign(new WebhookDeliveryDto(), known);
    const errors = mergeFieldErrors(
      { ...unknown, ...unstorableTextErrors(known, '') },
      toFieldErrors(
        validateSync(envelope, {
          whitelist: true,
          forbidNonWhitelisted: true,
          stopAtFirstError: true,
          validationError: { target: false, value: false },
        }),
      ),
    );

    const webhook = errors.event ? undefined : this.registry.find(envelope.event);
    if (!errors.event && !webhook) {
      const names = this.registry.events();
      errors.event = [
        names.length
          ? `The event must be one of: ${names.join(', ')}.`
          : 'No webhook events are accepted.',
      ];
    }
    let payload: object | undefined;
    if (webhook && !errors.payload) {
      const checked = await checkPayload(webhook, envelope.payload);
      if (checked.errors) Object.assign(errors, checked.errors);
      else payload = checked.payload;
    }

    if (Object.keys(errors).length > 0 || !webhook || !payload) {
      throw new ValidationFailedException(errors);
    }
    return { webhook, payload, raw: envelope.payload };
  }
}

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
