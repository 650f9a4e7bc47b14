import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../pagination/page-query.dto.js';
import { WEBHOOK_STATUSES, type WebhookStatus } from '../webhook-event.entity.js';
import { MAX_EVENT_NAME_LENGTH } from '../webhook-registry.js';

/** GET /v2/webhooks: the standard paging query plus two filters. */
export class WebhookListQueryDto extends PageQueryDto {
  // Any name, not only registered ones: events of a since-removed module stay listable.
  @ApiPropertyOptional({ description: 'Only events of this name.', maxLength: 100 })
  @IsOptional()
  @IsString({ message: 'The event must be a string.' })
  @MaxLength(MAX_EVENT_NAME_LENGTH, {
    message: `The event must be at most ${MAX_EVENT_NAME_LENGTH} characters.`,
  })
  event?: string;

  @ApiPropertyOptional({ enum: WEBHOOK_STATUSES, description: 'Only events in this status.' })
  @IsOptional()
  @IsIn(WEBHOOK_STATUSES, { message: `The status must be one of: ${WEBHOOK_STATUSES.join(', ')}.` })
  status?: WebhookStatus;
}
