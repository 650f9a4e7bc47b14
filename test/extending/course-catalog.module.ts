import { Controller, Get, Injectable, Module, Param, Query } from '@nestjs/common';
import {
  ApiNotFoundResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
} from '@nestjs/swagger';
import { InjectRepository } from '@nestjs/typeorm';
import { IsDefined, IsIn, IsInt, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { Column, Entity, PrimaryColumn, type Repository, type ValueTransformer } from 'typeorm';
import { CurrentPrincipal } from '../../src/auth/decorators/current-principal.decorator.js';
import { RequireScopes } from '../../src/auth/decorators/require-scopes.decorator.js';
import type { Principal } from '../../src/auth/principal.js';
import { NotFoundApiException } from '../../src/common/exceptions/api.exception.js';
import { ApiDataResponse } from '../../src/common/openapi/api-response.decorators.js';
import { ErrorDto } from '../../src/common/openapi/error.dto.js';
import {
  DatabaseModule,
  defineList,
  InjectList,
  type PagedList,
} from '../../src/database/index.js';
import { ApiPaginatedResponse } from '../../src/pagination/api-paginated-response.decorator.js';
import type { Page } from '../../src/pagination/page.js';
import { PageQueryDto, toPageRequest } from '../../src/pagination/page-query.dto.js';
import { PaginationModule } from '../../src/pagination/pagination.module.js';
import {
  type WebhookContext,
  type WebhookEventHandler,
  WebhookHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';
import { CreateCourseCatalog1764000000000 } from './1764000000000-CreateCourseCatalog.js';

// ---- The event: catalog.course.published, stored in the module's own table ----------------

export const SUBJECTS = ['languages', 'maths', 'science'] as const;
export type Subject = (typeof SUBJECTS)[number];

/** PostgreSQL hands bigint back as a string. */
const bigintAsNumber: ValueTransformer = {
  to: (value: number) => value,
  from: (value: string | number) => Number(value),
};

@Entity({ name: 'catalog_courses' })
export class PublishedCourse {
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 64 })
  clientId: string;

  @PrimaryColumn({ name: 'course_id', type: 'bigint', transformer: bigintAsNumber })
  courseId: number;

  @Column({ type: 'varchar', length: 200 })
  title: string;

  @Column({ type: 'varchar', length: 32 })
  subject: Subject;
}

export class CoursePublishedPayload {
  @ApiProperty({ type: 'integer', minimum: 1, example: 42 })
  @IsDefined({ message: 'The course_id field is required.' })
  @IsInt({ message: 'The course_id must be a positive integer.' })
  @Min(1, { message: 'The course_id must be a positive integer.' })
  @Max(Number.MAX_SAFE_INTEGER, { message: 'The course_id must be a positive integer.' })
  course_id: number;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Fractions' })
  @IsDefined({ message: 'The title field is required.' })
  @IsString({ message: 'The title must be a string.' })
  @Length(1, 200, { message: 'The title must be 1 to 200 characters.' })
  title: string;

  @ApiProperty({ enum: SUBJECTS, example: 'maths' })
  @IsDefined({ message: 'The subject field is required.' })
  @IsIn(SUBJECTS, { message: `The subject must be one of: ${SUBJECTS.join(', ')}.` })
  subject: Subject;
}

@WebhookHandler({
  event: 'catalog.course.published',
  payload: CoursePublishedPayload,
  dedupeKey: (payload) => payload.course_id,
})
export class CoursePublishedHandler implements WebhookEventHandler<CoursePublishedPayload> {
  /** Stores the course; a later publication of it (a new webhook-id) replaces title and subject. */
  async handle(payload: CoursePublishedPayload, { clientId, manager }: WebhookContext) {
    const { course_id: courseId, title, subject } = payload;
    await manager
      .getRepository(PublishedCourse)
      .upsert({ clientId, courseId, title, subject }, ['clientId', 'courseId']);
  }
}

// ---- The list: GET /v2/catalog/courses, the caller's courses, by subject -------------------

/** Declared once; the migration counts the same table, key and columns. */
export const coursesList = defineList({
  entity: PublishedCourse,
  key: 'courseId',
  order: 'DESC',
  scope: 'clientId',
  filters: ['subject'],
  // Webhook deliveries write it concurrently: PostgreSQL appends count changes, folded later.
  appendChanges: true,
});

/** The paging parameters of every list, and this one's filter; then what an item answers. */
export class CourseQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: SUBJECTS, description: 'Only the courses of this subject.' })
  @IsOptional()
  @IsIn(SUBJECTS, { message: `The subject must be one of: ${SUBJECTS.join(', ')}.` })
  subject?: Subject;
}

export class CourseDto {
  @ApiProperty({ type: 'integer', example: 42 })
  course_id: number;

  @ApiProperty({ example: 'Fractions' })
  title: string;

  @ApiProperty({ enum: SUBJECTS })
  subject: Subject;

  static from(course: PublishedCourse): CourseDto {
    return { course_id: course.courseId, title: course.title, subject: course.subject };
  }
}

@Injectable()
export class CoursesRepository {
  constructor(
    @InjectList(coursesList) private readonly list: PagedList<PublishedCourse>,
    @InjectRepository(PublishedCourse) private readonly courses: Repository<PublishedCourse>,
  ) {}

  /** One client's courses, highest course id first, with the exact total; a subject, or all. */
  pageOf(clientId: string, query: CourseQueryDto): Promise<Page<PublishedCourse>> {
    return this.list.page(toPageRequest(query), clientId, { subject: query.subject });
  }

  /** One course of one client, or null. */
  findOne(clientId: string, courseId: number): Promise<PublishedCourse | null> {
    return this.courses.findOneBy({ clientId, courseId });
  }
}

/**
 * 404 in the contract's shape, with this resource's own message (the exception filter answers a
 * plain Nest NotFoundException with its generic one).
 */
export class CourseNotFoundException extends NotFoundApiException {
  constructor() {
    super('Course not found.');
  }
}

/** A course id as the path carries it: a canonical positive integer, or no course at all. */
const COURSE_ID = /^[1-9][0-9]{0,14}$/;

@ApiTags('catalog')
@Controller('v2/catalog/courses')
export class CoursesController {
  constructor(private readonly courses: CoursesRepository) {}

  @Get()
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: "The caller's published courses, paged, highest course id first." })
  @ApiPaginatedResponse(CourseDto)
  async list(
    @Query() query: CourseQueryDto,
    @CurrentPrincipal() principal: Principal,
  ): Promise<Page<CourseDto>> {
    const page = await this.courses.pageOf(principal.clientId, query);
    return page.map(CourseDto.from);
  }

  @Get(':course_id')
  @RequireScopes('webhooks:read')
  @ApiOperation({ summary: 'One published course of the caller.' })
  @ApiDataResponse(CourseDto)
  @ApiNotFoundResponse({ type: ErrorDto, description: 'Unknown, or published by another client.' })
  async one(
    @Param('course_id') courseId: string,
    @CurrentPrincipal() principal: Principal,
  ): Promise<CourseDto> {
    const course = COURSE_ID.test(courseId)
      ? await this.courses.findOne(principal.clientId, Number(courseId))
      : null;
    if (!course) throw new CourseNotFoundException();
    return CourseDto.from(course);
  }
}

// ---- The module: the only line outside this folder is its place in AppModule's imports ----

@Module({
  imports: [
    PaginationModule,
    DatabaseModule.forFeature({
      entities: [PublishedCourse],
      migrations: [CreateCourseCatalog1764000000000],
      lists: [coursesList],
    }),
  ],
  controllers: [CoursesController],
  providers: [CoursePublishedHandler, CoursesRepository],
})
export class CourseCatalogModule {}
