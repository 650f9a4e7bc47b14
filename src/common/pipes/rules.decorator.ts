/**
 * Several property decorators (class-validator rules, `@ApiProperty()`…) as one, read as if they
 * were written stacked in this order: a 422 names the first listed rule a field breaks (the
 * pipe's toFieldErrors()). Nest's `applyDecorators()` would apply them first to last, which is
 * the reverse of stacked decorators, and so report the last listed rule instead.
 */
export function Rules(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, property) => {
    // Stacked decorators run bottom-up: the last written first.
    for (const decorator of [...decorators].reverse()) decorator(target, property);
  };
}
