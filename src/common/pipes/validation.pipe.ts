import {
  ArgumentMetadata,
  Injectable,
  Type,
  ValidationError,
  ValidationPipe,
} from '@nestjs/common';
import { TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import {
  getMetadataStorage,
  ValidationTypes,
  validateSync,
  type ValidatorOptions,
} from 'class-validator';
import {
  FieldErrors,
  NotFoundApiException,
  ValidationFailedException,
} from '../exceptions/api.exception.js';
import {
  bodyObject,
  isPlainObject,
  mergeFieldErrors,
  NO_FIELD_ERRORS,
  unstorable,
  unstorableTextErrors,
  splitUnknownFields,
} from './dto-fields.js';
import { firstBrokenRule } from './first-broken-rule.js';
import { readOAuthParameters, readsOAuthParameters } from './oauth-parameters.js';
import { cacheRuleLookups } from './rule-lookups.js';

// Installed where the service's validation is set up; it serves every class-validator call of the
// process (the global pipe and webhook payloads).
cacheRuleLookups();

/**
 * Turns class-validator's error tree into docs/contract.md §2's map of dotted paths to messages:
 * one message per field, the first rule it breaks in the order the decorators are written
 * (firstBrokenRule(): the errors must carry their target).
 */
export function toFieldErrors(errors: ValidationError[], prefix = ''): FieldErrors {
  if (errors.length === 0) return NO_FIELD_ERRORS;
  // A Map: a path such as `toString` must not find Object.prototype's member.
  const out = new Map<string, string[]>();
  const visit = (list: ValidationError[], base: string) => {
    for (const error of list) {
      const path = base ? `${base}.${error.property}` : error.property;
      const rule = firstBrokenRule(error);
      if (rule !== undefined) {
        const message =
          rule === 'whitelistValidation'
            ? `The ${path} field is not allowed.`
            : error.constraints![rule];
        out.set(path, [...(out.get(path) ?? []), message]);
      }
      if (error.children?.length) visit(error.children, path);
    }
  };
  visit(errors, prefix);
  return Object.fromEntries(out);
}

/**
 * What is refused before the DTO's rules run: a body that is not an object, unknown fields (by
 * own-property lookup), NUL characters and, in a query, a parameter given twice that takes one
 * value. Returns the declared part of the value and the errors
 * found. RFC 6749 parameters (the /oauth bodies) are read by their own rules instead: unknown
 * ones ignored, a repeated one refused (readOAuthParameters()).
 */
function screen(metatype: Type, value: unknown, type: 'body' | 'query') {
  if (readsOAuthParameters(metatype)) {
    return { known: readOAuthParameters(metatype, value), errors: NO_FIELD_ERRORS };
  }
  const { known, errors } = splitUnknownFields(metatype, bodyObject(value), {
    singleValues: type === 'query',
  });
  const unstorable = unstorableTextErrors(known, '');
  return { known, errors: hasErrors(unstorable) ? { ...errors, ...unstorable } : errors };
}

const hasErrors = (errors: FieldErrors) => Object.keys(errors).length > 0;

/**
 * The pipe's class-validator options, shared by both paths (see AppValidationPipe). The target is
 * kept to find each field's rules in written order (toFieldErrors()); it is not reported.
 */
const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  validationError: { target: true, value: false },
};

/**
 * validateFlat()'s: unknown fields are already refused by screen(), so class-validator's own
 * whitelist pass (a second look at every key) would find nothing.
 */
const FLAT_VALIDATOR_OPTIONS: ValidatorOptions = { ...VALIDATOR_OPTIONS, whitelist: false };

const flatness = new WeakMap<Type, boolean>();

/**
 * A flat DTO is validated by class-validator's synchronous rules alone: no nested object to
 * build, no asynchronous rule, and nothing for class-transformer to do (no @Type, @Transform,
 * @Expose or @Exclude), so setting the body's keys on a new instance is all plainToInstance()
 * would do. Decided once per class.
 */
export function isFlatDto(metatype: Type): boolean {
  let flat = flatness.get(metatype);
  if (flat === undefined) {
    const storage = getMetadataStorage();
    const rules = storage.getTargetValidationMetadatas(metatype, '', true, false);
    const deep = rules.some(
      (rule) =>
        rule.type === ValidationTypes.NESTED_VALIDATION ||
        rule.type === ValidationTypes.PROMISE_VALIDATION ||
        (rule.type === ValidationTypes.CUSTOM_VALIDATION &&
          storage.getTargetValidatorConstraints(rule.constraintCls).some((c) => c.async)),
    );
    const properties = new Set(rules.map((rule) => rule.propertyName));
    flat = rules.length > 0 && !deep && !transformsAny(metatype, properties);
    flatness.set(metatype, flat);
  }
  return flat;
}

/** Anything class-transformer's plainToInstance() would do to `metatype` beyond copying keys. */
function transformsAny(metatype: Type, properties: Set<string>): boolean {
  const storage = defaultMetadataStorage;
  return (
    storage.getStrategy(metatype) !== 'none' ||
    storage.getExposedMetadatas(metatype).length > 0 ||
    storage.getExcludedMetadatas(metatype).length > 0 ||
    [...properties].some(
      (property) =>
        storage.findTypeMetadata(metatype, property) !== undefined ||
        storage.findTransformMetadatas(metatype, property, TransformationType.PLAIN_TO_CLASS)
          .length > 0,
    )
  );
}

/** validateFlat() is for flat DTOs only: anything else is a mistake in the calling code. */
function assertFlat(metatype: Type): void {
  if (!isFlatDto(metatype)) {
    throw new Error(`${metatype.name} is not a flat DTO: validate it with transform().`);
  }
}

/**
 * The global pipe (APP_PIPE), the one validation path of every route's body and query:
 * whitelist + forbidNonWhitelisted + transform, and a 422 in the contract's shape, one message per
 * field (the first rule it breaks as written: toFieldErrors()). A body that is not a JSON object
 * is refused before class-validator sees it. The /oauth bodies (DTOs marked
 * @OAuthParameters()) are read by RFC 6749's rules instead of the whitelist, and their 422 is
 * answered as invalid_request by the exception filter (asOAuthError()).
 */
@Injectable()
export class AppValidationPipe extends ValidationPipe {
  constructor() {
    super({
      ...VALIDATOR_OPTIONS,
      transform: true,
      exceptionFactory: (errors) => new ValidationFailedException(toFieldErrors(errors)),
    });
  }

  /**
   * Every route's body and query DTO: a flat one (checked once per class: isFlatDto()) by
   * validateFlat(), any other by class-transformer and class-validator as Nest's pipe does
   * (validateDeep()). Both give the same answers (validation.pipe.spec.ts).
   */
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { type, metatype } = metadata;
    // What Nest's pipe does with a custom decorator's value (@CustomerId(), @CurrentPrincipal()…)
    // when validateCustomDecorators is off: nothing, here without its asynchronous round.
    if (type === 'custom') return value;
    // A path parameter no stored row can hold (PostgreSQL refuses a NUL outright, a 500 in any
    // lookup by it): it names nothing. After the guards, so 401 and 403 come first.
    if (type === 'param' && typeof value === 'string' && unstorable(value)) {
      throw new NotFoundApiException(
        'Not found: the path holds a character no stored name has (NUL or an unpaired surrogate).',
      );
    }
    if ((type === 'body' || type === 'query') && this.isClass(metadata) && isFlatDto(metatype!)) {
      return this.validateFlat(metatype!, value, type);
    }
    return this.validateDeep(value, metadata);
  }

  /** Nest's ValidationPipe, after unknown fields and unstorable text are screened out. */
  async validateDeep(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const { type, metatype } = metadata;
    if ((type !== 'body' && type !== 'query') || !this.isClass(metadata)) {
      return super.transform(value, metadata);
    }
    if (type === 'query' && !isPlainObject(value)) return super.transform(value, metadata);
    const { known, errors } = screen(metatype!, value, type);
    try {
      const valid: unknown = await super.transform(known, metadata);
      if (hasErrors(errors)) throw new ValidationFailedException(errors);
      return valid;
    } catch (error) {
      if (!(error instanceof ValidationFailedException) || !hasErrors(errors)) throw error;
      throw new ValidationFailedException(mergeFieldErrors(errors, error.errors));
    }
  }

  /**
   * The same answer as validateDeep() for a flat DTO (no nested DTO, no class-transformer
   * decorator, synchronous rules: checked at first use), without its asynchronous round and
   * class-transformer's copy: the value's keys are set on a new instance and validated
   * synchronously. The general path was 11 % of a PUT's CPU (docs/benchmarks.md).
   */
  validateFlat<T extends object>(
    metatype: Type<T>,
    value: unknown,
    type: 'body' | 'query' = 'body',
  ): T {
    assertFlat(metatype);
    const { known, errors } = screen(metatype, value, type);
    const entity = Object.assign(new metatype(), known);
    const invalid = toFieldErrors(validateSync(entity, FLAT_VALIDATOR_OPTIONS));
    if (hasErrors(errors) || hasErrors(invalid)) {
      throw new ValidationFailedException(mergeFieldErrors(errors, invalid));
    }
    return entity;
  }

  private isClass(metadata: ArgumentMetadata): boolean {
    const { metatype } = metadata;
    return !!metatype && !NOT_DTOS.includes(metatype as never);
  }
}

const NOT_DTOS = [String, Boolean, Number, Array, Object];
