/**
 * class-transformer's decorator metadata, which its package exports no type for: read once per
 * DTO class to tell whether plainToInstance() would do more than copy keys (isFlatDto()).
 */
declare module 'class-transformer/cjs/storage.js' {
  import type { MetadataStorage } from 'class-transformer/types/MetadataStorage.js';
  export const defaultMetadataStorage: MetadataStorage;
}
