import 'reflect-metadata';
import { Exclude, Expose, Transform, Type } from 'class-transformer';
import { IsInt, IsString, registerDecorator } from 'class-validator';
import { CreateCustomerDto } from '../../customers/dto/create-customer.dto.js';
import { UpdateCompanyDto } from '../../customers/dto/update-company.dto.js';
import { AttemptCompletedPayload } from '../../learning/dto/attempt-completed.payload.js';
import { ValidationFailedException } from '../exceptions/api.exception.js';
import { AppValidationPipe, isFlatDto } from './validation.pipe.js';

type Outcome = { value: Record<string, unknown> } | { errors: Record<string, string[]> };

const pipe = new AppValidationPipe();

async function outcome(run: () => unknown): Promise<Outcome> {
  try {
    const value = (await run()) as Record<string, unknown>;
    expect(value).toBeInstanceOf(UpdateCompanyDto);
    return { value: { ...value } };
  } catch (error) {
    if (!(error instanceof ValidationFailedException)) throw error;
    return { errors: error.errors };
  }
}

// Valid and invalid bodies, wrong types, unknown and prototype keys, non-objects.
const bodies: unknown[] = [
  { name: 'Acme Ltd' },
  { type: 'limited-company' },
  { name: null },
  { name: 'Acme', type: 'sole-trader' },
  { name: null, type: 'partnership' },
  {},
  { name: '' },
  { name: 'x'.repeat(255) },
  { name: 'x'.repeat(256) },
  { name: 'A\0B' },
  { name: 5 },
  { name: true, type: 3 },
  { type: null },
  { type: 'bogus' },
  { name: { first: 'A' } },
  { name: ['A'] },
  { extra: 1 },
  { name: 'Acme', extra: 1, other: null },
  { name: 'Acme', constructor: 'x' },
  { name: 'Acme', prototype: {} },
  JSON.parse('{"name":"Acme","__proto__":{"polluted":true}}'),
  [],
  'Acme',
  null,
  42,
];

describe('AppValidationPipe: the flat path', () => {
  const label = (body: unknown) =>
    JSON.stringify(body).replace(/x{20,}/, (run) => `x×${run.length}`);

  it.each(bodies.map((body) => [label(body), body]))(
    'answers %s exactly as the general path does',
    async (_, body) => {
      const metadata = { type: 'body', metatype: UpdateCompanyDto } as const;
      const general = await outcome(() => pipe.validateDeep(structuredClone(body), metadata));
      const flat = await outcome(() => pipe.transform(structuredClone(body), metadata));
      expect(flat).toEqual(general);
    },
  );

  it('keeps a field that was not sent undefined, so that it stays unchanged', () => {
    const changes = pipe.validateFlat(UpdateCompanyDto, { type: 'charity' });
    expect(changes.type).toBe('charity');
    expect(changes.name).toBeUndefined();
  });

  it('refuses, at first use, a DTO with a nested object', () => {
    expect(() => pipe.validateFlat(CreateCustomerDto, {})).toThrow(
      'CreateCustomerDto is not a flat DTO',
    );
  });
});

describe('isFlatDto', () => {
  class WithType {
    @IsString() name: string;
    @Type(() => Date) @IsInt() at: Date;
  }
  class WithTransform {
    @Transform(({ value }: { value: unknown }) => String(value)) @IsString() name: string;
  }
  class WithExpose {
    @Expose({ name: 'full_name' }) @IsString() name: string;
  }
  @Exclude()
  class ExcludingAll {
    @IsString() name: string;
  }
  const Later: PropertyDecorator = (target, propertyName) =>
    registerDecorator({
      name: 'later',
      async: true,
      target: target.constructor,
      propertyName: propertyName as string,
      validator: { validate: () => Promise.resolve(true) },
    });
  class WithAsyncRule {
    @Later name: string;
  }
  class WithoutRules {
    name: string;
  }

  it('takes the DTOs of a PUT and of a webhook payload as flat', () => {
    expect([isFlatDto(UpdateCompanyDto), isFlatDto(AttemptCompletedPayload)]).toEqual([true, true]);
  });

  it.each([
    ['a nested DTO', CreateCustomerDto],
    ['@Type', WithType],
    ['@Transform', WithTransform],
    ['@Expose', WithExpose],
    ['a class-level @Exclude', ExcludingAll],
    ['an asynchronous rule', WithAsyncRule],
    ['no rule at all', WithoutRules],
  ])('does not take a DTO with %s as flat', (_what, dto: new () => object) => {
    expect(isFlatDto(dto)).toBe(false);
  });
});
