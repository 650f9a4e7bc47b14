import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { Repository } from 'typeorm';
import { Page } from '../../src/pagination/page.js';
import { type PageQueryDto, toPageRequest } from '../../src/pagination/page-query.dto.js';
import { PublishedCourse } from './course-catalog.module.js';

/**
 * docs/extending.md's "list in another order": the catalog's courses by title, paged with
 * TypeORM's findAndCount rather than a declared list (which orders only by its key).
 */
@Injectable()
export class CoursesByTitle {
  constructor(
    @InjectRepository(PublishedCourse) private readonly courses: Repository<PublishedCourse>,
  ) {}

  /** One client's courses by title; rows and total are two statements, and a far page costs more. */
  async pageOf(clientId: string, query: PageQueryDto): Promise<Page<PublishedCourse>> {
    const request = toPageRequest(query);
    const [items, total] = await this.courses.findAndCount({
      where: { clientId },
      order: { title: 'ASC', courseId: 'ASC' },
      skip: request.offset,
      take: request.limit,
    });
    return new Page(items, total, request);
  }
}
