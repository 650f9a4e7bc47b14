import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { FieldErrors, ValidationFailedException } from '../exceptions/api.exception.js';

/** Turns class-validator's error tree into CONTRACT §2's map of dotted paths to messages. */
export function toFieldErrors(errors: ValidationError[], prefix = ''): FieldErrors {
  const out: FieldErrors = {};
  const visit = (list: ValidationError[], base: string) => {
    for (const error of list) {
      const path = base ? `${base}.${error.property}` : error.property;
      const constraints = error.constraints ?? {};
      const messages = Object.entries(constraints).map(([rule, message]) =>
        rule === 'whitelistValidation' ? `The ${path} field is not allowed.` : message,
      );
      if (messages.length) (out[path] ??= []).push(...messages);
      if (error.children?.length) visit(error.children, path);
    }
  };
  visit(errors, prefix);
  return out;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The global pipe (APP_PIPE): whitelist + forbidNonWhitelisted + transform, and a 422 in the
 * contract's shape. A body that is not a JSON object is refused before class-validator sees it.
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationFailedException(toFieldErrors(errors)),
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata) {
    if (metadata.type === 'body' && this.isClass(metadata) && !isPlainObject(value)) {
      throw new ValidationFailedException({ body: ['The request body must be a JSON object.'] });
    }
    return super.transform(value, metadata);
  }

  private isClass(metadata: ArgumentMetadata): boolean {
    const { metatype } = metadata;
    return !!metatype && ![String, Boolean, Number, Array, Object].includes(metatype as never);
  }
}
