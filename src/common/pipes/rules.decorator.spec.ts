import { applyDecorators } from '@nestjs/common';
import 'reflect-metadata';
import { IsDefined, IsString, MaxLength } from 'class-validator';
import { ValidationFailedException } from '../exceptions/api.exception.js';
import { Rules } from './rules.decorator.js';
import { AppValidationPipe } from './validation.pipe.js';

const required = 'The name field is required.';
const text = 'The name must be a string.';
const short = 'The name must be at most 3 characters.';

class Bundled {
  @Rules(
    IsDefined({ message: required }),
    IsString({ message: text }),
    MaxLength(3, { message: short }),
  )
  name: string;
}

class Stacked {
  @IsDefined({ message: required })
  @IsString({ message: text })
  @MaxLength(3, { message: short })
  name: string;
}

class WithApplyDecorators {
  @applyDecorators(IsDefined({ message: required }), IsString({ message: text }))
  name: string;
}

const pipe = new AppValidationPipe();
const errorsOf = async (dto: new () => object, body: object) => {
  try {
    await pipe.transform(body, { type: 'body', metatype: dto });
    return undefined;
  } catch (error) {
    if (!(error instanceof ValidationFailedException)) throw error;
    return error.errors;
  }
};

describe('Rules(): several rules as one decorator, read as written', () => {
  it.each([
    [{}, required],
    [{ name: 5 }, text],
    [{ name: 'long' }, short],
  ])(
    'names the first listed rule %j breaks, as the same rules stacked do',
    async (body, message) => {
      expect(await errorsOf(Bundled, body)).toEqual({ name: [message] });
      expect(await errorsOf(Stacked, body)).toEqual({ name: [message] });
    },
  );

  it("is needed: Nest's applyDecorators() reads them the other way round", async () => {
    expect(await errorsOf(WithApplyDecorators, {})).toEqual({ name: [text] });
  });

  it('lets a valid value through', async () => {
    expect(await errorsOf(Bundled, { name: 'abc' })).toBeUndefined();
  });
});
