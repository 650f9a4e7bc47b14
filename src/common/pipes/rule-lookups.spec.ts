import 'reflect-metadata';
import {
  getMetadataStorage,
  IsInt,
  IsString,
  MetadataStorage,
  validateSync,
} from 'class-validator';
import { cacheRuleLookups } from './rule-lookups.js';

class Parent {
  @IsString() name!: string;
}

class Child extends Parent {
  @IsInt() count!: number;
}

type Target = new () => object;

const lookup = (storage: MetadataStorage, target: Target) =>
  storage.getTargetValidationMetadatas(target, '', false, false);
const described = (storage: MetadataStorage, target: Target) =>
  lookup(storage, target)
    .map((rule) => `${rule.propertyName}:${rule.name}`)
    .sort();
/** The rules `target`'s own decorators put in class-validator's global storage. */
const ownRules = (target: Target) =>
  lookup(getMetadataStorage(), target).filter((rule) => rule.target === target);

/** A storage of its own holding `targets`' rules, so that the global one stays as it is. */
function storageOf(targets: Target[], { cached = true } = {}) {
  const storage = new MetadataStorage();
  if (cached) cacheRuleLookups(storage);
  for (const target of targets) ownRules(target).forEach((r) => storage.addValidationMetadata(r));
  return storage;
}

describe('cacheRuleLookups', () => {
  it("answers what class-validator's own lookup answers, and the same arrays again", () => {
    const plain = storageOf([Parent, Child], { cached: false });
    const storage = storageOf([Parent, Child]);
    expect(described(storage, Child)).toEqual(['count:isInt', 'name:isString']);
    expect(described(storage, Parent)).toEqual(['name:isString']);
    for (const target of [Parent, Child]) {
      expect(described(storage, target)).toEqual(described(plain, target));
    }
    const rules = lookup(storage, Child);
    expect(lookup(storage, Child)).toBe(rules);
    const byProperty = storage.groupByPropertyName(rules);
    expect(storage.groupByPropertyName(rules)).toBe(byProperty);
    expect(Object.keys(byProperty).sort()).toEqual(['count', 'name']);
  });

  it('finds a rule added after a lookup, on the class and on its subclasses', () => {
    const storage = storageOf([Parent]);
    expect(described(storage, Child)).toEqual(['name:isString']);
    ownRules(Child).forEach((rule) => storage.addValidationMetadata(rule));
    expect(described(storage, Child)).toEqual(['count:isInt', 'name:isString']);
  });

  it('leaves validation as it was: a rule declared after a validation applies', () => {
    // The global storage, as the service has it (validation.pipe.ts caches its lookups).
    cacheRuleLookups();
    class Late {
      @IsString() name!: string;
    }
    const late = Object.assign(new Late(), { name: 'x', count: 'many' });
    expect(validateSync(late)).toEqual([]);
    IsInt()(Late.prototype, 'count');
    expect(validateSync(late).map((error) => error.property)).toEqual(['count']);
  });
});
