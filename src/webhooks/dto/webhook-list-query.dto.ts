import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '../../pagination/page-query.dto.js';
import { WEBHOOK_STATUSES, type WebhookStatus } from '../webhook-event.entity.js';
import { MAX_EVENT_NAME_LENGTH } from '../webhook-registry.js';

/** GET /v2/webhooks: the standard paging query plus two filters. */
export class WebhookListQueryDto extends PageQueryDto {
  // Any name, not only registered ones: events of a since-removed module stay listable. But
  // not an empty one: no event has that name (the registry refuses it), so `?event=` would only
  // hide a caller's bug behind an empty page.
  @ApiPropertyOptional({
    description: 'Only events of this name.',
    minLength: 1,
    maxLength: MAX_EVENT_NAME_LENGTH,
  })
  @IsOptional()
  @IsString({ message: 'The event must be a string.' })
  @MinLength(1, { message: 'The event must not be empty.' })
  @MaxLength(MAX_EVENT_NAME_LENGTH, {
    message: `The event must be at most ${MAX_EVENT_NAME_LENGTH} characters.`,
  })
  event?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_STATUSES, description: 'Only events in this status.' })
  @IsOptional()
  @IsIn(WEBHOOK_STATUSES, { message: `The status must be one of: ${WEBHOOK_STATUSES.join(', ')}.` })
  status?: WebhookStatus;
}
