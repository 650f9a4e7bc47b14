import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';
import { createListCountsV2, dropListCountsV2 } from '../../src/database/frozen/list-counts-v2.js';

/**
 * The courses senders publish (catalog.course.published), and the counts that page each
 * client's courses by subject (GET /v2/catalog/courses). No SQL by hand: the table through
 * TypeORM's schema API, the counts and their triggers (both databases) through the frozen helper.
 */
export class CreateCourseCatalog1764000000000 implements MigrationInterface {
  name = 'CreateCourseCatalog1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'catalog_courses',
        columns: [
          { name: 'client_id', type: 'varchar', length: '64', isPrimary: true },
          { name: 'course_id', type: 'bigint', isPrimary: true },
          { name: 'title', type: 'varchar', length: '200' },
          { name: 'subject', type: 'varchar', length: '32' },
        ],
      }),
    );
    await createListCountsV2(queryRunner, COURSE_COUNTS);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropListCountsV2(queryRunner, COURSE_COUNTS);
    await queryRunner.dropTable('catalog_courses');
  }
}

/** As coursesList declares the list: by course id, per client (the scope), then by subject. */
const COURSE_COUNTS = {
  table: 'catalog_courses',
  key: 'course_id',
  columns: ['client_id', 'subject'],
  appendChanges: true,
};
