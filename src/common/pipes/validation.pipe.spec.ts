import type { Type as Class } from '@nestjs/common';
import 'reflect-metadata';
import { Exclude, Expose, Transform, Type } from 'class-transformer';
import { IsDefined, IsInt, IsString, MaxLength, registerDecorator } from 'class-validator';
import { CreateCustomerDto } from '../../customers/dto/create-customer.dto.js';
import { UpdateCompanyDto } from '../../customers/dto/update-company.dto.js';
import { AttemptCompletedPayload } from '../../learning/dto/attempt-completed.payload.js';
import { TokenRequestDto } from '../../auth/dto/token-request.dto.js';
import { WebhookDeliveryDto } from '../../webhooks/dto/webhook-delivery.dto.js';
import { parseForm, parseJson } from '../parsers/body-parsers.js';
import { firstProblem } from './oauth-parameters.js';
import { ValidationFailedException } from '../exceptions/api.exception.js';
import { AppValidationPipe, isFlatDto } from './validation.pipe.js';

type Outcome = { value: Record<string, unknown> } | { errors: Record<string, string[]> };

const pipe = new AppValidationPipe();

async function outcome(run: () => unknown, dto: Class = UpdateCompanyDto): Promise<Outcome> {
  try {
    const value = (await run()) as Record<string, unknown>;
    expect(value).toBeInstanceOf(dto);
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

describe('AppValidationPipe: one message per field, the first rule it breaks as written', () => {
  class Stacked {
    @IsDefined({ message: 'The name field is required.' })
    @IsString({ message: 'The name must be a string.' })
    @MaxLength(3, { message: 'The name must be at most 3 characters.' })
    name: string;
  }

  it.each<[string, Class, unknown, Record<string, string[]>]>([
    ['a missing field', Stacked, {}, { name: ['The name field is required.'] }],
    ['a null', Stacked, { name: null }, { name: ['The name field is required.'] }],
    ['a number', Stacked, { name: 1234 }, { name: ['The name must be a string.'] }],
    [
      'a long string',
      Stacked,
      { name: 'abcd' },
      { name: ['The name must be at most 3 characters.'] },
    ],
    [
      'a webhook with neither field',
      WebhookDeliveryDto,
      {},
      { event: ['The event field is required.'], payload: ['The payload field is required.'] },
    ],
    [
      'a webhook with nulls',
      WebhookDeliveryDto,
      { event: null, payload: null },
      { event: ['The event field is required.'], payload: ['The payload field is required.'] },
    ],
    [
      'a webhook with an unknown field and a NUL inside its payload',
      WebhookDeliveryDto,
      { event: 'e', payload: { note: 'a\0b' }, source: 'x' },
      {
        source: ['The source field is not allowed.'],
        'payload.note': ['The payload.note must not contain NUL characters.'],
      },
    ],
    [
      'a webhook with unstorable text inside arrays of its payload',
      WebhookDeliveryDto,
      { event: 'e', payload: { tags: ['ok', 1, 'a\0b', [{ k: '\ud800' }], { '\0': 1 }] } },
      {
        'payload.tags.2': ['The payload.tags.2 must not contain NUL characters.'],
        'payload.tags.3.0.k': [
          'The payload.tags.3.0.k must not contain unpaired surrogates (\\ud800 to \\udfff).',
        ],
        'payload.tags.4.\0': ['The payload.tags.4.\0 field name must not contain NUL characters.'],
      },
    ],
  ])('%s, by both paths', async (_, dto, body, expected) => {
    const metadata = { type: 'body', metatype: dto } as const;
    const general = await outcome(() => pipe.validateDeep(structuredClone(body), metadata), dto);
    const flat = await outcome(() => pipe.transform(structuredClone(body), metadata), dto);
    expect(general).toEqual({ errors: expected });
    expect(flat).toEqual(general);
  });
});

describe('AppValidationPipe: RFC 6749 parameters (@OAuthParameters())', () => {
  const metadata = { type: 'body', metatype: TokenRequestDto } as const;
  const json = (text: string) => parseJson(text, { findRepeatedKeys: true });
  const oauthBodies: [string, unknown][] = [
    ['valid JSON', json('{"grant_type":"client_credentials","scope":"a"}')],
    ['valid form', parseForm('grant_type=client_credentials&scope=a')],
    ['unknown parameters', json('{"grant_type":"x","scope":"a","toString":1,"z":[1,2]}')],
    ['empty values', parseForm('grant_type=&scope=a&client_id=')],
    ['a null value', json('{"grant_type":null,"scope":"a"}')],
    ['a repeated form parameter', parseForm('grant_type=x&scope=a&scope=b')],
    ['a repeated JSON key', json('{"grant_type":"x","scope":"a","scope":"b"}')],
    ['an array value', json('{"grant_type":"x","scope":"a","username":["u"]}')],
    ['a wrong type and a missing parameter', json('{"scope":7}')],
    ['a password grant without username', json('{"grant_type":"password","scope":"a"}')],
    ['no body', undefined],
    ['a JSON null body', null],
    ['an array body', []],
  ];

  it.each(oauthBodies)('answers %s by the flat path as by the general one', async (_, body) => {
    const general = await outcome(() => pipe.validateDeep(body, metadata), TokenRequestDto);
    const flat = await outcome(() => pipe.transform(body, metadata), TokenRequestDto);
    expect(flat).toEqual(general);
  });

  const problem = async (body: unknown) => {
    const result = await outcome(() => pipe.transform(body, metadata), TokenRequestDto);
    return 'errors' in result ? firstProblem(result.errors) : result.value;
  };

  it('ignores unknown parameters and reads an empty value as omitted', async () => {
    expect(await problem(oauthBodies[2][1])).toEqual({ grant_type: 'x', scope: 'a' });
    expect(await problem(oauthBodies[3][1])).toBe('The grant_type parameter is required.');
  });

  it('refuses a repeated parameter, from a form or a JSON body, before any rule', async () => {
    expect(await problem(oauthBodies[5][1])).toBe('The scope parameter must not be repeated.');
    expect(await problem(json('{"scope":1,"scope":2}'))).toBe(
      'The scope parameter must not be repeated.',
    );
  });

  it('names a parameter sent wrongly before one left out', async () => {
    expect(await problem(oauthBodies[8][1])).toBe('The scope parameter must be a string.');
    expect(await problem(oauthBodies[9][1])).toBe('The username parameter is required.');
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
