import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { EnvelopeInterceptor } from './envelope.interceptor.js';

/** The `{data}` / `{data, meta}` envelope for every route not marked @RawResponse(). */
@Module({ providers: [{ provide: APP_INTERCEPTOR, useClass: EnvelopeInterceptor }] })
export class PaginationModule {}
