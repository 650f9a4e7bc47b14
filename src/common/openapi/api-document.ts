import type { INestApplication, Type } from '@nestjs/common';
import {
  DocumentBuilder,
  getSchemaPath,
  type HeaderObject,
  type OpenAPIObject,
  type OperationObject,
  type ReferenceObject,
  type RequestBodyObject,
  type ResponseObject,
  type SchemaObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { OAuthErrorDto } from '../../auth/dto/oauth-error.dto.js';
import { SCOPE_DESCRIPTIONS } from '../../auth/scopes.js';
import { classesWithNestedFields, declaredFields } from '../pipes/dto-fields.js';
import { ErrorDto } from './error.dto.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const error = (description: string, dto: Type | Type[] = ErrorDto): ResponseObject => ({
  description,
  content: {
    'application/json': {
      schema: Array.isArray(dto)
        ? { oneOf: dto.map((one) => ({ $ref: getSchemaPath(one) })) }
        : { $ref: getSchemaPath(dto) },
    },
  },
});

/**
 * A head Node's parser refuses before its path is known (one over 64 KiB, one cut off by the
 * headers timeout) is answered in the plain shape, even on the OAuth endpoints.
 */
const UNREAD_HEAD = [OAuthErrorDto, ErrorDto];

/**
 * The statuses that come from the layers every route shares (the HTTP layer, the body parsers,
 * the database, the exception filter) rather than from its controller; the controllers document
 * their own (401/403 through @RequireScopes, 404, 422, the OAuth errors).
 */
function sharedResponses(path: string, operation: OperationObject): Record<string, ResponseObject> {
  const api = path.startsWith('/v2/');
  const oauth = path.startsWith('/oauth/');
  const body = operation.requestBody !== undefined;
  return {
    // OAuth endpoints answer a bad body 400 invalid_request, documented by their controller.
    ...(!oauth && {
      '400': error(
        body
          ? 'Malformed JSON body, a `__proto__` key, or a malformed request.'
          : api
            ? 'Two Authorization headers, or a malformed request.'
            : 'Malformed request.',
      ),
    }),
    // The HTTP layer's answer to a request that does not arrive in time: a head that trickles in
    // (HTTP_HEADERS_TIMEOUT_MS, any route, a GET too) or a body (HTTP_REQUEST_TIMEOUT_MS). Node's
    // parser keeps a head's path to itself until the head ends, so one cut off is answered in the
    // plain shape even on the OAuth endpoints.
    '408': error(
      oauth
        ? 'The request (its head or its body) did not arrive in time; in the plain shape when its head did not.'
        : body
          ? 'The request (its head or its body) did not arrive in time.'
          : 'The request head did not arrive in time.',
      oauth ? UNREAD_HEAD : ErrorDto,
    ),
    // The OAuth endpoints' 413 has their RFC 6749 body, documented by their controller.
    ...(body && !oauth && { '413': error('Body over 1 MiB.') }),
    // The HTTP layer's refusals have the RFC 6749 body on the OAuth endpoints.
    // (a head over 64 KiB: in the plain shape everywhere, UNREAD_HEAD).
    '414': error(
      oauth
        ? 'URL (path and query string) over 8 KiB; in the plain shape when the head is over 64 KiB.'
        : 'URL (path and query string) over 8 KiB.',
      oauth ? UNREAD_HEAD : ErrorDto,
    ),
    ...(body && api && { '415': error('Body that is not JSON, or not UTF-8.') }),
    '417': error('An `Expect` header other than `100-continue`.', oauth ? OAuthErrorDto : ErrorDto),
    '431': error(
      oauth
        ? 'Headers over 16 KiB; in the plain shape when the head is over 64 KiB.'
        : 'Headers over 16 KiB.',
      oauth ? UNREAD_HEAD : ErrorDto,
    ),
    '500': error(
      'Unexpected failure (logged with the request id, never described).',
      oauth ? OAuthErrorDto : ErrorDto,
    ),
    // A request that arrives on a kept-alive connection while the service stops is refused on
    // every route (bootstrap's onRequest hook), /health and /.well-known/* too.
    '503': error(
      api || oauth
        ? 'The database cannot be reached, or the service is busy or stopping.'
        : 'The service is stopping.',
      oauth ? OAuthErrorDto : ErrorDto,
    ),
  };
}

/** The OpenAPI document served at /docs/openapi.json: the controllers' own, completed. */
export function createApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Company API')
      .setDescription(
        'OAuth 2.0 token issuance, customer company details, webhook intake and paged lists. ' +
          'The rules behind every answer are in the repository, docs/contract.md.',
      )
      .setVersion('2')
      // One process serves the authorization server, the API and this document (docs/contract.md
      // §1): relative to the document, the server is right whatever the host, port or proxy.
      .addServer('/', 'This service: the host that serves this document')
      .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }, 'bearer')
      // The same tokens described as OAuth 2.0, so that a generic client (Swagger UI's Authorize,
      // a generated SDK) can fetch one and knows which scopes a route needs.
      .addOAuth2(
        {
          type: 'oauth2',
          flows: {
            clientCredentials: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS },
            password: { tokenUrl: '/oauth/token', scopes: SCOPE_DESCRIPTIONS },
          },
        },
        'oauth2',
      )
      // OAuth client authentication (client_secret_basic) at the /oauth endpoints.
      .addBasicAuth({ type: 'http', scheme: 'basic' }, 'client_basic')
      .build(),
    { extraModels: [ErrorDto] },
  );
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      operation.responses = { ...sharedResponses(path, operation), ...operation.responses };
      for (const [status, response] of Object.entries(operation.responses)) {
        const headers = responseHeaders(path, status);
        (response as ResponseObject).headers = {
          ...headers,
          ...(response as ResponseObject).headers,
        };
      }
    }
  }
  // Once every response is in place: a schema one of them uses stays open (closeNested()).
  const answered = responseSchemas(document);
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/v2/')) continue;
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) closeBody(document, operation, answered);
    }
  }
  return document;
}

const component = (document: OpenAPIObject, ref: string): SchemaObject | undefined =>
  document.components?.schemas?.[ref.replace('#/components/schemas/', '')] as
    SchemaObject | undefined;

const resolve = (document: OpenAPIObject, each: SchemaObject | ReferenceObject): SchemaObject =>
  '$ref' in each ? component(document, each.$ref)! : each;

const close = (schema: SchemaObject) => {
  if (schema.type === 'object' && schema.additionalProperties === undefined) {
    schema.additionalProperties = false;
  }
};

/**
 * A `/v2` body names every field it takes: the global ValidationPipe refuses any other with 422
 * (docs/contract.md §2), so its top-level schema (each event's envelope, for a webhook) says
 * `additionalProperties: false`, for tools that validate or generate requests, and so does the
 * schema of each object nested in it by @NestedObject() (closeNested()), which the pipe checks
 * the same way. A webhook's payload stays open: it is no nested DTO (its event's DTO keeps the
 * fields it does not name, docs/contract.md §6).
 */
function closeBody(document: OpenAPIObject, operation: OperationObject, answered: Set<string>) {
  const body = operation.requestBody as RequestBodyObject | undefined;
  const schema = body?.content['application/json']?.schema;
  if (!schema) return;
  const top = resolve(document, schema);
  for (const each of top.oneOf?.map((one) => resolve(document, one)) ?? [top]) close(each);
  if ('$ref' in schema) closeNested(document, schema.$ref, answered);
}

/**
 * Closes the schemas of the DTOs that the DTO whose schema is `ref` holds through @NestedObject(),
 * at any depth: the pipe refuses their unknown fields too (splitUnknownFields()). A schema that a
 * response uses as well stays open: closed, it would tell clients to refuse an answer that gains
 * a field.
 */
function closeNested(document: OpenAPIObject, ref: string, answered: Set<string>) {
  const holder = [...classesWithNestedFields()].find((type) => getSchemaPath(type) === ref);
  if (!holder) return;
  for (const nested of declaredFields(holder).values()) {
    if (!nested) continue;
    const path = getSchemaPath(nested());
    const schema = answered.has(path) ? undefined : component(document, path);
    // Said already: closed through another body (its own nested DTOs too), or open on purpose.
    if (!schema || schema.additionalProperties !== undefined) continue;
    close(schema);
    closeNested(document, path, answered);
  }
}

/** The component schemas the responses use, directly or through other schemas. */
function responseSchemas(document: OpenAPIObject): Set<string> {
  const found = new Set<string>();
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      if (key !== '$ref') visit(value);
      else if (typeof value === 'string' && !found.has(value)) {
        found.add(value);
        visit(component(document, value));
      }
    }
  };
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) visit(item[method]?.responses);
  }
  return found;
}

const text = (description: string): HeaderObject => ({ description, schema: { type: 'string' } });

/** The headers an answer of `status` carries on `path` (docs/contract.md §2, §3). */
function responseHeaders(path: string, status: string): Record<string, HeaderObject> {
  const oauth = path.startsWith('/oauth/');
  return {
    'X-Request-Id': text(
      "The request's id: the caller's own when it sent a short printable one, else a new one.",
    ),
    ...(status === '401' && {
      'WWW-Authenticate': text(
        oauth
          ? 'Basic realm="oauth" when the client authenticated with HTTP Basic.'
          : 'The challenge: Bearer realm="api" (with error="invalid_token" for a bad token), or WebhookSignature realm="webhooks" for a refused signature.',
      ),
    }),
    ...(status === '400' &&
      path.startsWith('/v2/') && {
        'WWW-Authenticate': text(
          'Bearer realm="api", error="invalid_request" when the request has several Authorization headers.',
        ),
      }),
    ...(status === '403' && {
      'WWW-Authenticate': text('Bearer realm="api", error="insufficient_scope", scope="…".'),
    }),
    ...((status === '429' || status === '503') && {
      'Retry-After': {
        description: 'Seconds to wait before trying again.',
        schema: { type: 'integer' },
      },
    }),
    ...(oauth && {
      'Cache-Control': text('no-store (RFC 6749 §5.1).'),
      Pragma: text('no-cache.'),
    }),
  };
}
