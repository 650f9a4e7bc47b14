import { Injectable, Module } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsDefined, IsInt, Min } from 'class-validator';
import {
  type WebhookContext,
  WebhookFailure,
  WebhookHandler,
  type WebhookEventHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';

/** The table the test event writes to; created by the test, since it is not part of the app. */
export const CREATE_TEST_JOBS = 'CREATE TABLE test_jobs (job_id integer PRIMARY KEY)';

export class JobFinishedPayload {
  @ApiProperty({ type: 'integer', minimum: 1 })
  @IsDefined({ message: 'The job_id field is required.' })
  @IsInt({ message: 'The job_id must be a positive integer.' })
  @Min(1, { message: 'The job_id must be a positive integer.' })
  job_id: number;
}

/** The test's hand on the handler: make it fail or succeed, and count its runs. */
@Injectable()
export class FlakySwitch {
  failing = true;
  /** Jobs that fail even when `failing` is off. */
  failingJobs = new Set<number>();
  runs = 0;
}

@WebhookHandler({
  event: 'test.job.finished',
  payload: JobFinishedPayload,
  dedupeKey: (payload) => payload.job_id,
})
export class JobFinishedHandler implements WebhookEventHandler<JobFinishedPayload> {
  constructor(private readonly flaky: FlakySwitch) {}

  async handle(payload: JobFinishedPayload, { manager }: WebhookContext): Promise<void> {
    this.flaky.runs++;
    // Written before failing, to show that a failure rolls the handler's writes back.
    await manager.query(`INSERT INTO test_jobs (job_id) VALUES (${Number(payload.job_id)})`);
    if (this.flaky.failing || this.flaky.failingJobs.has(payload.job_id))
      throw new WebhookFailure(`job ${payload.job_id}: downstream unavailable`);
  }
}

/**
 * A second webhook event added the way any module adds one, WebhooksModule untouched: a payload
 * DTO, a @WebhookHandler() provider, a module. Its handler fails until the switch is flipped.
 */
@Module({ providers: [FlakySwitch, JobFinishedHandler] })
export class FlakyEventModule {}
