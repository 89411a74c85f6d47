/**
 * Every metric dcgate serves on GET /metrics, in one place so docs/metrics.md can list them and code elsewhere
 * counts in one line (`metrics.conversions.inc({ source, outcome: 'accepted' })`).
 *
 * One registry per process, as prom-client is meant to be used: a process serves one dcgate app, and with several
 * instances each serves its own numbers (Prometheus adds them up). Labels hold only values from a fixed set
 * (route patterns, platform and source names, outcomes), never an id, a key or anything a client sent.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

export const metricsRegistry = new Registry()

// Node's own numbers (event-loop lag, heap, CPU, handles) under dcgate_ too, so one prefix finds everything.
collectDefaultMetrics({ register: metricsRegistry, prefix: 'dcgate_' })

const registers = [metricsRegistry]
/** Seconds: from a fast in-memory answer to a platform's 10 s timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export const metrics = {
  buildInfo: new Gauge({ name: 'dcgate_build_info', help: 'Always 1; the version label says which dcgate this process runs.', labelNames: ['version'] as const, registers }),
  httpRequests: new Counter({
    name: 'dcgate_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern (never the raw path) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  }),
  httpDuration: new Histogram({
    name: 'dcgate_http_request_duration_seconds',
    help: 'Time from a request reaching dcgate to its answer being ready, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  conversions: new Counter({
    name: 'dcgate_conversions_total',
    help: 'Conversions received, by intake source and outcome (accepted: stored; duplicate: a repeat of a stored one).',
    labelNames: ['source', 'outcome'] as const,
    registers,
  }),
  deliveries: new Counter({
    name: 'dcgate_deliveries_total',
    help: 'Events sent to ad platforms, by platform, kind (conversion, or adjustment: a refund told to the platform) and outcome (sent, rejected, retry).',
    labelNames: ['platform', 'kind', 'outcome'] as const,
    registers,
  }),
  deliveryDuration: new Histogram({
    name: 'dcgate_delivery_duration_seconds',
    help: 'Time of one call to an ad platform (authorize, send, read the answer), by platform and kind.',
    labelNames: ['platform', 'kind'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  outboxPending: new Gauge({
    name: 'dcgate_outbox_pending',
    help: 'Deliveries waiting for a first attempt or a retry (whole database, read at scrape), by platform.',
    labelNames: ['platform'] as const,
    registers,
  }),
  outboxOldestAge: new Gauge({
    name: 'dcgate_outbox_oldest_pending_age_seconds',
    help: 'Age of the oldest delivery still waiting (whole database, read at scrape), by platform.',
    labelNames: ['platform'] as const,
    registers,
  }),
  outboxScrapeErrors: new Counter({
    name: 'dcgate_outbox_scrape_errors_total',
    help: 'Scrapes whose outbox query failed or timed out (the outbox gauges then keep their last values).',
    registers,
  }),
  captureQueued: new Gauge({ name: 'dcgate_capture_queued_hits', help: 'Capture hits accepted and not yet written to the database (this process).', registers }),
  captureJournalBytes: new Gauge({ name: 'dcgate_capture_journal_bytes', help: 'Bytes in capture journal segments not yet written to the database (this process).', registers }),
  captureDeadLettered: new Gauge({ name: 'dcgate_capture_dead_lettered_rows', help: 'Capture rows the database refused and that were set aside since start (this process).', registers }),
  captureFlushDuration: new Histogram({
    name: 'dcgate_capture_flush_duration_seconds',
    help: 'Time of one capture flush (queued hits written to the database), by outcome (ok, failed).',
    labelNames: ['outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  }),
  crmPolls: new Counter({
    name: 'dcgate_crm_polls_total',
    help: 'CRM polls run by this process, by CRM and outcome (ok, failed).',
    labelNames: ['crm', 'outcome'] as const,
    registers,
  }),
  deletionRequests: new Counter({
    name: 'dcgate_deletion_requests_total',
    help: 'Data deletion requests received, by channel (public: the form; api: the private-key route).',
    labelNames: ['channel'] as const,
    registers,
  }),
  erasures: new Counter({
    name: 'dcgate_erasures_total',
    help: 'Erasure runs of deletion requests, by outcome (completed, failed, busy).',
    labelNames: ['outcome'] as const,
    registers,
  }),
  emailChecks: new Counter({
    name: 'dcgate_email_checks_total',
    help: 'Email checks answered, by risk label (low, medium, high, critical).',
    labelNames: ['risk'] as const,
    registers,
  }),
  dbPool: new Gauge({
    name: 'dcgate_db_pool_connections',
    help: 'Database connections of this process, by state (used, free, pending: requests waiting for one).',
    labelNames: ['state'] as const,
    registers,
  }),
} as const
