import type { ValueTransformer } from 'typeorm';

/**
 * Epoch numbers in `bigint` columns: node-postgres returns int8 as a string (it may exceed 2^53),
 * SQLite as a number. Ours (seconds or milliseconds) stay far below 2^53, so both become numbers.
 */
export const epochColumn: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};

/** A short list of names kept in one varchar column, space-separated (as OAuth writes scopes). */
export const spaceListColumn: ValueTransformer = {
  to: (value: string[] | undefined) => value?.join(' '),
  from: (value: string | null) => (value ? value.split(' ').filter(Boolean) : []),
};
