import { Ajv, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS: imported from ESM, its function is the module's `default`.
const addFormats = ajvFormats.default;

interface MediaType {
  schema?: object;
}
interface Operation {
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components?: object;
}

/** Test-only controllers booted beside the app; they are not the service's contract. */
const TEST_ROUTES = /^\/test\//;
const DOCUMENT_ID = 'openapi.json';

/**
 * Checks every response the app sends on a documented route against the OpenAPI document the app
 * serves: the status must be documented for that operation, and a JSON body must match the
 * status's schema. Installed by startTestApp on every in-process test app, so the whole e2e suite
 * keeps the document honest; TestApp.close() fails the file on any mismatch.
 */
export class ResponseContract {
  readonly violations: string[] = [];
  private document?: Document;
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  /** Before the app is ready (Fastify takes hooks only then). */
  install(fastify: FastifyInstance) {
    fastify.addHook('onSend', (request, reply, payload, done) => {
      this.check(
        request.method,
        request.routeOptions.url,
        reply.statusCode,
        String(reply.getHeader('content-type') ?? ''),
        payload,
      );
      done(null, payload);
    });
  }

  /** Once the app is ready: the document the app serves (createApiDocument). */
  load(document: Document) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: DOCUMENT_ID, components: document.components ?? {} });
    this.document = document;
  }

  private check(
    method: string,
    pattern: string | undefined,
    status: number,
    contentType: string,
    payload: unknown,
  ) {
    if (!this.document || !pattern || method === 'HEAD' || TEST_ROUTES.test(pattern)) return;
    const path = pattern.replace(/:(\w+)/g, '{$1}');
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    if (!operation) return;
    const where = `${method} ${path} → ${status}`;
    const response = operation.responses[String(status)] ?? operation.responses.default;
    if (!response) {
      this.violations.push(`${where}: status not documented`);
      return;
    }
    if (!response.content) return;
    const mediaType = contentType.split(';')[0].trim();
    const media = response.content[mediaType];
    if (!media) {
      this.violations.push(`${where}: content type "${mediaType}" not documented`);
      return;
    }
    if (!media.schema || mediaType !== 'application/json' || typeof payload !== 'string') return;
    const validate = this.validator(`${where} ${mediaType}`, media.schema);
    let body: unknown;
    try {
      body = JSON.parse(payload);
    } catch {
      this.violations.push(`${where}: body is not JSON`);
      return;
    }
    if (!validate(body)) {
      this.violations.push(
        `${where}: ${this.ajv.errorsText(validate.errors)} in ${payload.slice(0, 300)}`,
      );
    }
  }

  private validator(key: string, schema: object): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      // The document's own references, resolved against the components registered in load().
      const resolved = JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', `"${DOCUMENT_ID}#/components/`),
      ) as object;
      validate = this.ajv.compile(resolved);
      this.validators.set(key, validate);
    }
    return validate;
  }
}
