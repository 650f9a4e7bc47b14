import { Injectable, Module } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsInt, Min } from 'class-validator';
import type { EntityManager } from 'typeorm';
import { WebhookEvent } from '../../src/webhooks/webhook-event.entity.js';
import {
  type WebhookContext,
  type WebhookEventHandler,
  WebhookHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';

/** The table both test handlers write to; created by the test, since it is not part of the app. */
export const CREATE_TEST_RUNS =
  'CREATE TABLE test_runs (run_id integer PRIMARY KEY, event varchar(40) NOT NULL)';

export class RunPayload {
  @ApiProperty({ type: 'integer', minimum: 1 })
  @IsDefined({ message: 'The run_id field is required.' })
  @IsInt({ message: 'The run_id must be a positive integer.' })
  @Min(1, { message: 'The run_id must be a positive integer.' })
  run_id: number;
}

/** What the handlers did, per run_id: how often each ran, and what each saw of its transaction. */
@Injectable()
export class HandlerRuns {
  readonly counted = new Map<number, number>();
  readonly thrown = new Map<number, number>();
  /** Runs that did not find their own event row and their own write inside their transaction. */
  readonly blind: number[] = [];
  /** The transaction each run was given, in the order the runs started. */
  readonly managers: EntityManager[] = [];

  reset() {
    this.counted.clear();
    this.thrown.clear();
    this.blind.length = 0;
    this.managers.length = 0;
  }
}

/** Writes its row with the query builder, then reads it back and its event through a repository. */
async function writeAndLook(
  runs: HandlerRuns,
  event: string,
  runId: number,
  { manager, eventId }: WebhookContext,
) {
  runs.managers.push(manager);
  await manager
    .createQueryBuilder()
    .insert()
    .into('test_runs', ['run_id', 'event'])
    .values({ run_id: runId, event })
    .execute();
  const own = await manager
    .createQueryBuilder()
    .select('COUNT(*)', 'n')
    .from('test_runs', 'r')
    .where('r.run_id = :runId', { runId })
    .getRawOne<{ n: string | number }>();
  const stored = await manager.getRepository(WebhookEvent).existsBy({ id: eventId });
  return Number(own?.n) === 1 && stored;
}

@WebhookHandler({
  event: 'test.run.counted',
  payload: RunPayload,
  dedupeKey: (payload) => payload.run_id,
})
export class CountedRunHandler implements WebhookEventHandler<RunPayload> {
  constructor(private readonly runs: HandlerRuns) {}

  async handle(payload: RunPayload, context: WebhookContext): Promise<void> {
    const { counted, blind } = this.runs;
    counted.set(payload.run_id, (counted.get(payload.run_id) ?? 0) + 1);
    if (!(await writeAndLook(this.runs, 'test.run.counted', payload.run_id, context))) {
      blind.push(payload.run_id);
    }
  }
}

@WebhookHandler({
  event: 'test.run.thrown',
  payload: RunPayload,
  dedupeKey: (payload) => payload.run_id,
})
export class ThrownRunHandler implements WebhookEventHandler<RunPayload> {
  constructor(private readonly runs: HandlerRuns) {}

  async handle(payload: RunPayload, context: WebhookContext): Promise<void> {
    const { thrown, blind } = this.runs;
    thrown.set(payload.run_id, (thrown.get(payload.run_id) ?? 0) + 1);
    // Written before throwing: the throw must undo it, and nothing of the other deliveries.
    if (!(await writeAndLook(this.runs, 'test.run.thrown', payload.run_id, context))) {
      blind.push(payload.run_id);
    }
    throw new Error(`run ${payload.run_id} refused`);
  }
}

/** Two test-only events: one handler that counts its runs, one that always throws. */
@Module({ providers: [HandlerRuns, CountedRunHandler, ThrownRunHandler] })
export class HandlerRunsModule {}
