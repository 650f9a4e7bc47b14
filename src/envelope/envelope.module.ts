import { Module } from '@nestjs/common';
import { Envelope } from './envelope.js';

/** The `{data}` / `{data, meta}` envelope for every route not marked @RawResponse(). */
@Module({ providers: [Envelope] })
export class EnvelopeModule {}
