import { SetMetadata } from '@nestjs/common';

export const RAW_RESPONSE = 'rawResponse';

/**
 * Leaves the results of a controller's routes (on a class) or of one route (on a method) as they
 * are: no `{data}` envelope (OAuth, health, well-known documents).
 */
export const RawResponse = () => SetMetadata(RAW_RESPONSE, true);
