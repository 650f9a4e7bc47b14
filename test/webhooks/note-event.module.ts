import { Injectable, Module } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import {
  type WebhookEventHandler,
  WebhookHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';

/**
 * A payload with several rules per field, written top to bottom in the order they should be
 * reported: the type first, then its size or range.
 */
export class NoteAddedPayload {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: 1000 })
  @IsDefined({ message: 'The note_id field is required.' })
  @IsInt({ message: 'The note_id must be an integer.' })
  @Min(1, { message: 'The note_id must be at least 1.' })
  @Max(1000, { message: 'The note_id must be at most 1000.' })
  note_id: number;

  @ApiProperty({ type: 'string', minLength: 3, maxLength: 10, pattern: '^[a-z ]+$' })
  @IsDefined({ message: 'The title field is required.' })
  @IsString({ message: 'The title must be a string.' })
  @MinLength(3, { message: 'The title must be at least 3 characters long.' })
  @MaxLength(10, { message: 'The title must be at most 10 characters long.' })
  @Matches(/^[a-z ]+$/, { message: 'The title must be lowercase letters and spaces.' })
  title: string;

  @ApiPropertyOptional({ type: 'string', enum: ['low', 'high'] })
  @IsOptional()
  @IsString({ message: 'The priority must be a string.' })
  @IsIn(['low', 'high'], { message: 'The priority must be one of: low, high.' })
  priority?: string;
}

/** The notes the handler was given, for the tests to read. */
@Injectable()
export class AddedNotes {
  readonly ids: number[] = [];
}

@WebhookHandler({
  event: 'note.added',
  payload: NoteAddedPayload,
  dedupeKey: (payload) => payload.note_id,
})
export class NoteAddedHandler implements WebhookEventHandler<NoteAddedPayload> {
  constructor(private readonly notes: AddedNotes) {}

  async handle(payload: NoteAddedPayload): Promise<void> {
    this.notes.ids.push(payload.note_id);
  }
}

/**
 * An event added the way the docs add one (a payload DTO, a handler, a module imported beside
 * AppModule): the registry and OpenAPI tests must hold with it as they do without it.
 */
@Module({ providers: [AddedNotes, NoteAddedHandler] })
export class NoteEventModule {}
