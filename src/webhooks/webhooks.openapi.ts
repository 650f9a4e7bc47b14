import type { Type } from '@nestjs/common';
import { DECORATORS, getSchemaPath, type SchemaObject } from '@nestjs/swagger';
import type { WebhookDefinition } from './webhook-registry.js';

/**
 * POST /v2/webhooks' body schema. The accepted events are only known once every module is loaded,
 * after the decorators ran, so @ApiBody() holds this object and describeDeliveries() fills it in
 * when the controller is built, which is before the OpenAPI document is.
 */
export const deliveryBodySchema: SchemaObject = {};

/** One oneOf branch per registered event, each payload a component schema of its DTO. */
export function describeDeliveries(controller: Type, definitions: WebhookDefinition[]) {
  Reflect.defineMetadata(
    DECORATORS.API_EXTRA_MODELS,
    definitions.map((definition) => definition.payload),
    controller,
  );
  for (const key of Object.keys(deliveryBodySchema)) {
    delete deliveryBodySchema[key as keyof SchemaObject];
  }
  const branches: SchemaObject[] = definitions.map((definition) => ({
    type: 'object',
    title: definition.event,
    required: ['event', 'payload'],
    properties: {
      event: { type: 'string', enum: [definition.event] },
      // Fields the event does not name are kept (docs/contract.md §6): said beside the DTO's
      // schema, so that a generated client's type takes them too.
      payload: { allOf: [{ $ref: getSchemaPath(definition.payload) }], additionalProperties: true },
    },
  }));
  Object.assign(
    deliveryBodySchema,
    // One event needs no oneOf (a one-branch oneOf only obscures the schema).
    branches.length > 1
      ? { oneOf: branches }
      : branches.length === 1
        ? branches[0]
        : {
            type: 'object',
            required: ['event', 'payload'],
            properties: { event: { type: 'string' }, payload: { type: 'object' } },
          },
  );
}
