import { Module } from '@nestjs/common';
import { AttemptCompletedHandler } from './attempt-completed.handler.js';

/** Learning progress reported by other platforms: the learning.attempt.completed webhook. */
@Module({ providers: [AttemptCompletedHandler] })
export class LearningModule {}
