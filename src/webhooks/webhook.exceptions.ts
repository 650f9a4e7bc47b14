import { ApiException, NotFoundApiException } from '../common/exceptions/api.exception.js';

export class WebhookNotFoundException extends NotFoundApiException {
  constructor() {
    super('Webhook not found.');
  }
}

/**
 * 500 for a handler that threw: the event is stored as failed, and the sender gets its id so
 * that a redelivery or `webhooks:replay` can be matched to it. The cause is logged, never sent.
 */
export class WebhookProcessingFailedException extends ApiException {
  readonly status = 500;

  constructor(readonly id: string) {
    super('The webhook could not be processed.');
  }

  override body() {
    return { message: this.message, id: this.id };
  }
}
