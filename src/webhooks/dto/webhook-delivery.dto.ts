import { IsDefined, IsObject, IsString } from 'class-validator';

/**
 * The envelope of POST /v2/webhooks. `payload` is only checked to be an object here; its fields
 * are validated by the event's own payload DTO, and unknown ones are kept.
 */
export class WebhookDeliveryDto {
  @IsDefined({ message: 'The event field is required.' })
  @IsString({ message: 'The event must be a string.' })
  event: string;

  @IsDefined({ message: 'The payload field is required.' })
  @IsObject({ message: 'The payload must be an object.' })
  payload: Record<string, unknown>;
}
