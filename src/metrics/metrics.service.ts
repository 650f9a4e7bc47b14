import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Database } from '../database/index.js';

/** Latency buckets (seconds): a cached read takes well under a millisecond, a password grant ~50 ms. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Every metric of docs/operations.md "Metrics", in one registry per application. Labels are
 * bounded: a route is its URL pattern, never the raw URL, and caller-chosen values (grant types)
 * are mapped onto the known ones before they become a label.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request received to response sent, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  private readonly throttledRequests = new Counter({
    name: 'http_throttled_requests_total',
    help: 'Requests refused with 429 (throttled), by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    registers: [this.registry],
  });
  private readonly tokensIssued = new Counter({
    name: 'oauth_tokens_issued_total',
    help: 'Access tokens issued, by grant type.',
    labelNames: ['grant_type'] as const,
    registers: [this.registry],
  });
  private readonly tokensRefused = new Counter({
    name: 'oauth_tokens_refused_total',
    help: 'Token requests refused, by grant type and error (RFC 6749 code, or throttled).',
    labelNames: ['grant_type', 'error'] as const,
    registers: [this.registry],
  });
  private readonly webhookDeliveries = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook deliveries taken in, by event and outcome (processed or failed).',
    labelNames: ['event', 'outcome'] as const,
    registers: [this.registry],
  });
  /** One child per method, route and status, found with one Map lookup per request. */
  private readonly perRoute = new Map<string, { count: Counter; seconds: Histogram }>();

  constructor(db: Database) {
    new Gauge({
      name: 'db_pool_connections',
      help: 'Database connections by state (PostgreSQL pool: total, idle, waiting clients; SQLite: one).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { total, idle, waiting } = db.connections();
        this.set({ state: 'total' }, total);
        this.set({ state: 'idle' }, idle);
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }

  /** Process metrics (CPU, memory, event-loop lag, GC…), read at each scrape. */
  collectProcessMetrics() {
    collectDefaultMetrics({ register: this.registry });
  }

  request(method: string, route: string, status: number, seconds: number) {
    const key = `${method} ${status} ${route}`;
    let series = this.perRoute.get(key);
    if (!series) {
      const labels = { method, route, status_code: String(status) };
      series = {
        count: this.requests.labels(labels) as unknown as Counter,
        seconds: this.latency.labels(labels) as unknown as Histogram,
      };
      this.perRoute.set(key, series);
    }
    series.count.inc();
    series.seconds.observe(seconds);
    if (status === 429) this.throttledRequests.inc({ method, route });
  }

  tokenIssued(grantType: string) {
    this.tokensIssued.inc({ grant_type: grantType });
  }

  tokenRefused(grantType: string, error: string) {
    this.tokensRefused.inc({ grant_type: grantType, error });
  }

  webhookDelivered(event: string, outcome: 'processed' | 'failed') {
    this.webhookDeliveries.inc({ event, outcome });
  }
}
