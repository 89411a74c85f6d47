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

/** Seconds: from a fast in-memory answer to a platform's 10 s timeout. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const counter = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Counter<L>({ name, help, labelNames, registers: [metricsRegistry] })
const gauge = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Gauge<L>({ name, help, labelNames, registers: [metricsRegistry] })
const histogram = <L extends string = never>(name: string, help: string, labelNames: readonly L[] = []) =>
  new Histogram<L>({ name, help, labelNames, buckets: LATENCY_BUCKETS, registers: [metricsRegistry] })

export const metrics = {
  buildInfo: gauge(
    'dcgate_build_info',
    'Always 1; the version label says which dcgate this process runs.',
    ['version'],
  ),
  httpRequests: counter(
    'dcgate_http_requests_total',
    'HTTP requests answered, by method, route pattern (never the raw path) and status.',
    ['method', 'route', 'status'],
  ),
  httpDuration: histogram(
    'dcgate_http_request_duration_seconds',
    'Time from a request reaching dcgate to its answer being ready, by method, route pattern and status.',
    ['method', 'route', 'status'],
  ),
  conversions: counter(
    'dcgate_conversions_total',
    'Conversions received, by intake source and outcome (accepted: stored; duplicate: a repeat of a stored one).',
    ['source', 'outcome'],
  ),
  deliveries: counter(
    'dcgate_deliveries_total',
    'Events sent to ad platforms, by platform, kind (conversion, or adjustment: a refund told to the platform) and outcome (sent, rejected, retry).',
    ['platform', 'kind', 'outcome'],
  ),
  deliveryDuration: histogram(
    'dcgate_delivery_duration_seconds',
    'Time of one call to an ad platform (authorize, send, read the answer), by platform and kind.',
    ['platform', 'kind'],
  ),
  outboxPending: gauge(
    'dcgate_outbox_pending',
    'Deliveries waiting for a first attempt or a retry (whole database, read at scrape), by platform.',
    ['platform'],
  ),
  outboxOldestAge: gauge(
    'dcgate_outbox_oldest_pending_age_seconds',
    'Age of the oldest delivery still waiting (whole database, read at scrape), by platform.',
    ['platform'],
  ),
  outboxScrapeErrors: counter(
    'dcgate_outbox_scrape_errors_total',
    'Scrapes whose outbox query failed or timed out (the outbox gauges then keep their last values).',
  ),
  captureQueued: gauge(
    'dcgate_capture_queued_hits',
    'Capture hits accepted and not yet written to the database (this process).',
  ),
  captureJournalBytes: gauge(
    'dcgate_capture_journal_bytes',
    'Bytes in capture journal segments not yet written to the database (this process).',
  ),
  captureDeadLettered: gauge(
    'dcgate_capture_dead_lettered_rows',
    'Capture rows the database refused and that were set aside since start (this process).',
  ),
  captureFlushDuration: histogram(
    'dcgate_capture_flush_duration_seconds',
    'Time of one capture flush (queued hits written to the database), by outcome (ok, failed).',
    ['outcome'],
  ),
  crmPolls: counter(
    'dcgate_crm_polls_total',
    'CRM polls run by this process, by CRM and outcome (ok, failed).',
    ['crm', 'outcome'],
  ),
  deletionRequests: counter(
    'dcgate_deletion_requests_total',
    'Data deletion requests received, by channel (public: the form; api: the private-key route).',
    ['channel'],
  ),
  erasures: counter(
    'dcgate_erasures_total',
    'Erasure runs of deletion requests, by outcome (completed, failed, busy).',
    ['outcome'],
  ),
  emailChecks: counter(
    'dcgate_email_checks_total',
    'Email checks answered, by risk label (low, medium, high, critical).',
    ['risk'],
  ),
  memorySaver: gauge(
    'dcgate_memory_saver_mode',
    '1 while V8\'s memory saver mode is on (an idle process), 0 while a busy process runs without it.',
  ),
  dbPool: gauge(
    'dcgate_db_pool_connections',
    'Database connections of this process, by state (used, free, pending: requests waiting for one).',
    ['state'],
  ),
} as const
