import { Controller, Get, Injectable, Module, Query } from '@nestjs/common';
import { ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsDefined, IsInt, IsString, Length, Max, Min } from 'class-validator';
import { Column, Entity, PrimaryColumn, type ValueTransformer } from 'typeorm';
import { CurrentPrincipal } from '../../src/auth/decorators/current-principal.decorator.js';
import { RequireScopes } from '../../src/auth/decorators/require-scopes.decorator.js';
import type { Principal } from '../../src/auth/principal.js';
import {
  DatabaseModule,
  defineList,
  InjectList,
  type PagedList,
} from '../../src/database/index.js';
import { CompletedAttempt } from '../../src/learning/completed-attempt.entity.js';
import { ApiPaginatedResponse } from '../../src/pagination/api-paginated-response.decorator.js';
import type { Page } from '../../src/pagination/page.js';
import { PageQueryDto, toPageRequest } from '../../src/pagination/page-query.dto.js';
import { PaginationModule } from '../../src/pagination/pagination.module.js';
import {
  type WebhookContext,
  type WebhookEventHandler,
  WebhookHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';
import { CreateLearningCatalog1764000000000 } from './1764000000000-CreateLearningCatalog.js';

// ---- The event: learning.module.published, stored in its own table -------------------------

/** PostgreSQL hands bigint back as a string. */
const bigintAsNumber: ValueTransformer = {
  to: (value: number) => value,
  from: (value: string | number) => Number(value),
};

@Entity({ name: 'published_learning_modules' })
export class PublishedLearningModule {
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @PrimaryColumn({ name: 'module_id', type: 'bigint', transformer: bigintAsNumber })
  moduleId: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;
}

export class ModulePublishedPayload {
  @ApiProperty({ type: 'integer', minimum: 1, example: 42 })
  @IsDefined({ message: 'The module_id field is required.' })
  @IsInt({ message: 'The module_id must be a positive integer.' })
  @Min(1, { message: 'The module_id must be a positive integer.' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'The module_id must be a positive integer.' })
  module_id: number;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Fractions' })
  @IsDefined({ message: 'The title field is required.' })
  @IsString({ message: 'The title must be a string.' })
  @Length(1, 200, { message: 'The title must be 1 to 200 characters.' })
  title: string;
}

@WebhookHandler({
  event: 'learning.module.published',
  payload: ModulePublishedPayload,
  dedupeKey: (payload) => payload.module_id,
})
export class ModulePublishedHandler implements WebhookEventHandler<ModulePublishedPayload> {
  /** Publishing a module again renames it. */
  async handle(payload: ModulePublishedPayload, { clientId, manager }: WebhookContext) {
    await manager
      .getRepository(PublishedLearningModule)
      .upsert({ clientId, moduleId: payload.module_id, title: payload.title }, [
        'clientId',
        'moduleId',
      ]);
  }
}

// ---- The list: GET /v2/learning/attempts, the caller's completed attempts ------------------

/** Declared once; the migration counts the same table, key and columns. */
export const completedAttemptsList = defineList({
  entity: CompletedAttempt,
  key: 'attemptId',
  order: 'DESC',
  scope: 'clientId',
  // Webhook deliveries write it concurrently: PostgreSQL appends count changes, folded later.
  appendChanges: true,
});

export class CompletedAttemptDto {
  @ApiProperty({ type: 'integer', example: 1001 })
  attempt_id: number;

  @ApiProperty({ type: 'integer', example: 7 })
  user_id: number;

  @ApiProperty({ type: 'integer', example: 3 })
  module_id: number;

  @ApiProperty({ format: 'date-time' })
  recorded_at: string;

  static from(attempt: CompletedAttempt): CompletedAttemptDto {
    return {
      attempt_id: attempt.attemptId,
      user_id: attempt.userId,
      module_id: attempt.moduleId,
      recorded_at: attempt.recordedAt.toISOString(),
    };
  }
}

@Injectable()
export class CompletedAttemptsRepository {
  constructor(
    @InjectList(completedAttemptsList) private readonly list: PagedList<CompletedAttempt>,
  ) {}

  /** One client's attempts, newest attempt id first, with the exact total. */
  pageOf(clientId: string, query: PageQueryDto): Promise<Page<CompletedAttempt>> {
    return this.list.page(toPageRequest(query), clientId);
  }
}

@ApiTags('learning')
@Controller('v2/learning/attempts')
export class CompletedAttemptsController {
  constructor(private readonly attempts: CompletedAttemptsRepository) {}

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: "The caller's completed attempts, paged, newest attempt id first." })
  @ApiPaginatedResponse(CompletedAttemptDto)
  async list(
    @Query() query: PageQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<Page<CompletedAttemptDto>> {
    const page = await this.attempts.pageOf(principal.clientId, query);
    return page.map(CompletedAttemptDto.from);
  }
}

// ---- The module: the only line outside this folder is its place in AppModule's imports ----

@Module({
  imports: [
    PaginationModule,
    DatabaseModule.forFeature({
      entities: [PublishedLearningModule],
      migrations: [CreateLearningCatalog1764000000000],
      lists: [completedAttemptsList],
    }),
  ],
  controllers: [CompletedAttemptsController],
  providers: [ModulePublishedHandler, CompletedAttemptsRepository],
})
export class LearningCatalogModule {}
