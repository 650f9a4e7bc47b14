import { IsDefined, IsObject, IsString } from 'class-validator';

/**
 * The envelope of POST /v2/webhooks, validated by the global pipe like any body (unknown
 * top-level fields refused). `payload` is only checked to be an object here; once the envelope
 * is valid, WebhookRegistry.checkDelivery() checks the event name and validates the payload's
 * fields with the event's own payload DTO, keeping unknown ones.
 */
export class WebhookDeliveryDto {
  @IsDefined({ message: 'The event field is required.' })
  @IsString({ message: 'The event must be a string.' })
  event: string;

  @IsDefined({ message: 'The payload field is required.' })
  @IsObject({ message: 'The payload must be an object.' })
  payload: Record<string, unknown>;
}
