import { NotFoundApiException } from '../common/exceptions/api.exception.js';

export class CustomerNotFoundException extends NotFoundApiException {
  constructor() {
    super('Customer not found.');
  }
}
