import request from 'supertest';
import { createClient, issueToken, tokenRequest } from '../factories/client.factory.js';
import { attemptCompleted } from '../factories/webhook.factory.js';
import { startTestApp, TestApp } from '../support/app.js';
import { freePort } from '../support/processes.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format (0.0.4), as a scraper reads it: HELP/TYPE lines and samples. */
function parseExposition(text: string) {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) types.set(type[1], type[2]);
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [
        m[1],
        m[2],
      ]),
    );
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  const value = (name: string, labels: Record<string, string>) =>
    samples
      .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
      .reduce((sum, s) => sum + s.value, 0);
  return { types, samples, value };
}

/** docs/operations.md "Metrics": METRICS_PORT serves GET /metrics, and only that port does. */
describe('metrics', () => {
  let t: TestApp;
  let metricsUrl: string;
  beforeAll(async () => {
    const port = await freePort();
    t = await startTestApp({
      env: {
        METRICS_PORT: String(port),
        HOST: '127.0.0.1',
        THROTTLE_TOKEN_FAILURES_PER_CLIENT: '2',
      },
    });
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
  });
  afterAll(async () => {
    await t.close();
  });

  const scrape = async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(await res.text());
  };

  it('counts requests, latencies, tokens, refusals, throttling and webhooks after traffic', async () => {
    const client = await createClient(t);
    const token = await issueToken(t, client, ['customers:read', 'webhooks:write']);
    const wrong = { clientId: client.clientId, clientSecret: 'wrong' };
    for (let i = 0; i < 3; i++) {
      await tokenRequest(t, wrong, { grant_type: 'client_credentials', scope: 'customers:read' });
    }
    // Another client: the first one is now throttled from this address.
    const other = await createClient(t);
    await tokenRequest(t, other, { grant_type: 'magic', scope: 'customers:read' }).expect(400);
    await request(t.http).get('/v2/customers/7/company').expect(401);
    await request(t.http)
      .get('/v2/customers/12345/company')
      .set('authorization', `Bearer ${token}`)
      .expect(404);
    await request(t.http).get('/no/such/route').expect(404);
    await request(t.http)
      .post('/v2/webhooks')
      .set('authorization', `Bearer ${token}`)
      .send(attemptCompleted())
      .expect(200);

    const m = await scrape();
    expect(m.types.get('http_requests_total')).toBe('counter');
    expect(m.types.get('http_request_duration_seconds')).toBe('histogram');
    // By route pattern, not raw URL; an unknown route is one series whatever its URL.
    expect(
      m.value('http_requests_total', {
        method: 'GET',
        route: '/v2/customers/:customer_id/company',
        status_code: '401',
      }),
    ).toBe(1);
    expect(m.samples.some((s) => s.labels.route === '/v2/customers/7/company')).toBe(false);
    expect(
      m.value('http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' }),
    ).toBe(1);
    expect(
      m.value('http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v2/webhooks',
        status_code: '200',
      }),
    ).toBe(1);
    expect(
      m.value('http_request_duration_seconds_bucket', {
        method: 'POST',
        route: '/v2/webhooks',
        status_code: '200',
        le: '+Inf',
      }),
    ).toBe(1);

    expect(m.value('oauth_tokens_issued_total', { grant_type: 'client_credentials' })).toBe(1);
    expect(
      m.value('oauth_tokens_refused_total', {
        grant_type: 'client_credentials',
        error: 'invalid_client',
      }),
    ).toBe(2);
    expect(
      m.value('oauth_tokens_refused_total', {
        grant_type: 'client_credentials',
        error: 'throttled',
      }),
    ).toBe(1);
    expect(
      m.value('oauth_tokens_refused_total', {
        grant_type: 'other',
        error: 'unsupported_grant_type',
      }),
    ).toBe(1);
    expect(m.value('http_throttled_requests_total', { route: '/oauth/token' })).toBe(1);
    expect(
      m.value('webhook_deliveries_total', {
        event: 'learning.attempt.completed',
        outcome: 'processed',
      }),
    ).toBe(1);
    expect(m.value('db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    // The process's own metrics.
    expect(m.types.get('process_cpu_seconds_total')).toBe('counter');
    expect(m.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');
  });

  it('answers nothing else on the metrics port, and the API port has no /metrics', async () => {
    const other = await fetch(metricsUrl.replace('/metrics', '/health'));
    expect(other.status).toBe(404);
    expect(await other.json()).toEqual({ message: 'Route not found.' });
    expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    await request(t.http).get('/metrics').expect(404);
  });

  it('answers HEAD as GET, and carries the request id as the API port does', async () => {
    const head = await fetch(metricsUrl, {
      method: 'HEAD',
      headers: { 'x-request-id': 'scrape-1' },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(head.headers.get('x-request-id')).toBe('scrape-1');
    expect(await head.text()).toBe('');
    const post = await fetch(metricsUrl, { method: 'POST' });
    expect(post.status).toBe(404);
  });
});
