import { getMetadataStorage } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';

type Storage = ReturnType<typeof getMetadataStorage>;
type Grouped = ReturnType<Storage['groupByPropertyName']>;

const cached = new WeakSet<Storage>();

/**
 * class-validator finds a class's rules anew on every validation: it filters the class's rules,
 * tests every class that has rules for being a parent of it, and groups what it found by
 * property. Those answers change only when a rule is added (when a decorated class is declared),
 * so they are kept here until then. The lookups were about a quarter of a PUT body's validation,
 * and 2–3 % of a PUT's and 2 % of a webhook delivery's CPU (docs/benchmarks.md, fourteenth session).
 * Lookups by schema name or validation group are left as they were: the service uses neither.
 *
 * The kept arrays are handed out again: class-validator only reads them (it filters into new
 * arrays), and so must any other caller.
 */
export function cacheRuleLookups(storage: Storage = getMetadataStorage()): void {
  if (cached.has(storage)) return;
  cached.add(storage);
  const find = storage.getTargetValidationMetadatas.bind(storage);
  const group = storage.groupByPropertyName.bind(storage);
  const add = storage.addValidationMetadata.bind(storage);
  /** Per class, the rules for each combination of the two flags (see slot below). */
  let found = new Map<unknown, ValidationMetadata[][]>();
  let grouped = new WeakMap<ValidationMetadata[], Grouped>();

  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    if (schema || groups?.length) return find(target, schema, always, strictGroups, groups);
    const slot = (always ? 2 : 0) + (strictGroups ? 1 : 0);
    let bySlot = found.get(target);
    if (!bySlot) found.set(target, (bySlot = []));
    return (bySlot[slot] ??= find(target, schema, always, strictGroups));
  };
  storage.groupByPropertyName = (rules) => {
    let byProperty = grouped.get(rules);
    if (!byProperty) grouped.set(rules, (byProperty = group(rules)));
    return byProperty;
  };
  storage.addValidationMetadata = (rule) => {
    found = new Map();
    grouped = new WeakMap();
    add(rule);
  };
}
