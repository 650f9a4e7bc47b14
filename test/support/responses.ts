/** Error bodies of CONTRACT §2, pinned once for every test. */
export const errors = {
  routeNotFound: { message: 'Route not found.' },
  malformedJson: { message: 'The request body is malformed: it is not valid JSON.' },
  tooLarge: { message: 'The request body is larger than 1 MiB.' },
  unsupportedMediaType: {
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  internal: { message: 'Internal server error.' },
  tooManyRequests: { message: 'Too many requests.' },
  databaseUnavailable: { message: 'The service is temporarily unavailable.' },
  notReady: { message: 'The database cannot be reached.' },
  webhookNotFound: { message: 'Webhook not found.' },
  webhookFailed: (id: string) => ({ message: 'The webhook could not be processed.', id }),
  invalid: (fields: Record<string, string[]>) => ({
    message: 'The given data was invalid.',
    errors: fields,
  }),
} as const;
