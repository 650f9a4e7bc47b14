import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { DataEnvelopeInterceptor } from '../common/interceptors/data-envelope.interceptor.js';

/**
 * Paged results (docs/contract.md §7): a listing route takes PageQueryDto (`result_mode[...]`,
 * validated by the global pipe), returns a Page, and is documented by @ApiPaginatedResponse();
 * the envelope interceptor registered here turns the Page into `{data, meta}` (and any other
 * result into `{data}`). Imported by the listing modules and by AppModule; Nest builds it once,
 * so the interceptor is registered once.
 */
@Module({
  providers: [{ provide: APP_INTERCEPTOR, useClass: DataEnvelopeInterceptor }],
})
export class PaginationModule {}
