import { Module, type Type } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { AttemptCompletedPayload } from '../../src/learning/dto/attempt-completed.payload.js';
import {
  WebhookHandler,
  type WebhookEventHandler,
} from '../../src/webhooks/webhook-handler.decorator.js';
import { createTestDatabase, TestDatabase } from '../support/database.js';

@WebhookHandler({
  event: 'learning.attempt.completed',
  payload: AttemptCompletedPayload,
  dedupeKey: (payload) => payload.attempt_id,
})
class AnotherAttemptCompletedHandler implements WebhookEventHandler<AttemptCompletedPayload> {
  async handle(): Promise<void> {}
}

@WebhookHandler({
  event: 'test.no.handle',
  payload: AttemptCompletedPayload,
  dedupeKey: (payload) => payload.attempt_id,
})
class NoHandleHandler {
  process(): void {}
}

/** A module whose handler has no handle() method: nothing would process its event. */
@Module({ providers: [NoHandleHandler] })
class NoHandleModule {}

/** A module claiming an event LearningModule already handles. */
@Module({ providers: [AnotherAttemptCompletedHandler] })
class ConflictingEventModule {}

describe('webhook event registry', () => {
  let database: TestDatabase;
  const started: TestingModule[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
    process.env.DATABASE_URL = database.url;
  });
  afterAll(async () => {
    for (const moduleRef of started) await moduleRef.close();
    await database.drop();
  });

  /** Starts the application with `extra` beside it. */
  async function startWith(extra: Type): Promise<void> {
    const { AppModule } = await import('../../src/app.module.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule, extra] }).compile();
    started.push(moduleRef);
    await moduleRef.init();
  }

  it('refuses to start with two handlers for one event name, naming both', async () => {
    await expect(startWith(ConflictingEventModule)).rejects.toThrow(
      'Two handlers for the webhook event "learning.attempt.completed": AttemptCompletedHandler of LearningModule and AnotherAttemptCompletedHandler of ConflictingEventModule. Event names are unique across the application: rename one.',
    );
  });

  it('refuses to start with a handler that has no handle() method', async () => {
    await expect(startWith(NoHandleModule)).rejects.toThrow(
      'Webhook handler NoHandleHandler must be a singleton provider with a handle(payload, context) method.',
    );
  });
});
