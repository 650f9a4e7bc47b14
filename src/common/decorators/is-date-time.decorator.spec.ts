import 'reflect-metadata';
import { ValidationFailedException } from '../exceptions/api.exception.js';
import { AppValidationPipe } from '../pipes/validation.pipe.js';
import { IsDateTime } from './is-date-time.decorator.js';

const message = 'The published_at must be a date and time with its offset.';

class Published {
  @IsDateTime({ message })
  published_at: string;
}

const pipe = new AppValidationPipe();
const errorsOf = async (body: object) => {
  try {
    await pipe.transform(body, { type: 'body', metatype: Published });
    return undefined;
  } catch (error) {
    if (!(error instanceof ValidationFailedException)) throw error;
    return error.errors;
  }
};

describe('IsDateTime(): a point in time both databases store alike', () => {
  it.each([
    '2026-11-29T12:00:00Z',
    '2026-11-29T12:00:00.123+05:30',
    '2024-02-29T23:59:59-08:00',
    '9999-12-31T23:59:59Z',
    '0100-01-01T00:00:00Z',
  ])('takes %s', async (value) => {
    expect(await errorsOf({ published_at: value })).toBeUndefined();
  });

  it.each([
    ['no offset, read in the process zone', '2025-11-22T10:57'],
    ['a week date', '2025-W47-6'],
    ['a day that does not exist', '2025-02-30T10:00:00Z'],
    ['a date alone', '2025-11-22'],
    ['UTC year 10000, through a negative offset', '9999-12-31T23:59:59-23:59'],
    ['a number', 1764417600000],
    ['null', null],
  ])('refuses %s with the one message', async (_, value) => {
    expect(await errorsOf({ published_at: value })).toEqual({ published_at: [message] });
  });
});
