import { EntityNotFoundError, QueryFailedError } from 'typeorm';
import { WebhookNotFoundException } from '../webhooks/webhook.exceptions.js';
import { WebhookEvent } from '../webhooks/webhook-event.entity.js';
import { cliErrorMessage } from './cli-errors.js';

describe('cliErrorMessage', () => {
  it('never shows an ORM error text (entity dumps, SQL, parameters)', () => {
    const notFound = new EntityNotFoundError(WebhookEvent, { id: '01a2' });
    expect(cliErrorMessage(notFound)).toBe('A database operation failed.');

    const driverError = Object.assign(new Error('duplicate key value violates "secret_idx"'), {
      code: '23505',
    });
    const failed = new QueryFailedError('INSERT INTO users VALUES ($1)', ['hunter2'], driverError);
    expect(cliErrorMessage(failed)).toBe('A database operation failed (code 23505).');

    const down = new QueryFailedError(
      'SELECT 1',
      [],
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    );
    expect(cliErrorMessage(down)).toBe('The database cannot be reached (code ECONNREFUSED).');
  });

  it('shows errors worded for people as they are, on one line', () => {
    expect(cliErrorMessage(new WebhookNotFoundException())).toBe('Webhook not found.');
    expect(cliErrorMessage(new Error('No signing key\n  has the kid x.'))).toBe(
      'No signing key has the kid x.',
    );
  });
});
