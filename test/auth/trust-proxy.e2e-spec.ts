import request from 'supertest';
import { createAdapter } from '../../src/bootstrap.js';
import { validateEnvironment } from '../../src/config/environment.js';
import { startTestApp, TestApp } from '../support/app.js';
import { errors } from '../support/responses.js';
import { runNode } from '../support/processes.js';

/**
 * TRUST_PROXY decides whose X-Forwarded-For is believed, and with it the address every /oauth
 * limit counts by (CONTRACT §9). The tests call from 127.0.0.1.
 */
describe('TRUST_PROXY', () => {
  /** The address Fastify settles on, on the adapter the service is built with. */
  async function addressSeen(trustProxy: string, forwardedFor?: string): Promise<string> {
    const adapter = createAdapter(validateEnvironment({ TRUST_PROXY: trustProxy }));
    const fastify = adapter.getInstance();
    fastify.get('/ip', (req, reply) => reply.send({ ip: req.ip }));
    const url = await fastify.listen({ port: 0, host: '127.0.0.1' });
    try {
      const headers: Record<string, string> =
        forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor };
      const res = await fetch(`${url}/ip`, { headers });
      return ((await res.json()) as { ip: string }).ip;
    } finally {
      await fastify.close();
    }
  }

  it.each([
    // Nobody is believed: the peer's own address.
    ['false', '198.51.100.7', '127.0.0.1'],
    // One proxy in front: the address it saw (the last entry).
    ['1', '203.0.113.9, 198.51.100.7', '198.51.100.7'],
    // Two: the address the farther one saw.
    ['2', '203.0.113.9, 198.51.100.7', '203.0.113.9'],
    ['1', undefined, '127.0.0.1'],
    // The peer is a listed proxy, and so is 10.1.2.3 behind it: the first address not listed.
    ['127.0.0.1,10.0.0.0/8', '198.51.100.7, 10.1.2.3', '198.51.100.7'],
    ['loopback', '198.51.100.7', '198.51.100.7'],
    // The peer is not a listed proxy: its X-Forwarded-For is not believed.
    ['10.0.0.0/8', '198.51.100.7', '127.0.0.1'],
  ])('TRUST_PROXY=%s, X-Forwarded-For %s → %s', async (trustProxy, forwardedFor, expected) => {
    expect(await addressSeen(trustProxy, forwardedFor)).toBe(expected);
  });

  it('refuses TRUST_PROXY=true at start-up with one line saying what to write instead', async () => {
    const result = await runNode('dist/src/main.js', [], { TRUST_PROXY: 'true' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Invalid configuration: TRUST_PROXY=true would believe any X-Forwarded-For (anyone could ' +
        'pick their address); write false, the number of proxies in front of the service ' +
        '(e.g. 1), or their addresses or CIDR ranges (e.g. 10.0.0.0/8,127.0.0.1) (got "true")',
    );
    expect(result.stdout).toBe('');
  });

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ env: { THROTTLE_TOKEN_PER_IP: '3' } });
    });
    afterAll(async () => {
      await t.close();
    });

    it('throttles an address that rotates its X-Forwarded-For', async () => {
      for (let i = 0; i < 3; i++) {
        await request(t.http)
          .post('/oauth/token')
          .set('x-forwarded-for', `198.51.100.${i}`)
          .send({})
          .expect(400);
      }
      const res = await request(t.http)
        .post('/oauth/token')
        .set('x-forwarded-for', '198.51.100.99')
        .send({});
      expect({ status: res.status, body: res.body }).toEqual({
        status: 429,
        body: errors.tooManyRequests,
      });
    });
  });
});
