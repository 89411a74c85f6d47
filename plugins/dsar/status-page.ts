import { esc } from './mails.ts'
import type { ProofRecord } from './routes/proof.ts'

const STATUS_TEXT = {
  received: 'Received: waiting for the confirmation from the email address.',
  processing: 'Processing: the data is being deleted.',
  completed: 'Completed: the data has been deleted.',
} as const

const EVENT_TEXT: Record<string, string> = {
  request_received: 'Request received',
  confirmation_email_sent: 'Confirmation email sent',
  confirmation_email_failed: 'Confirmation email could not be sent',
  confirmed: 'Confirmed from the email link',
  erasure_started: 'Deletion started',
  erased: 'Deleted',
  erasure_failed: 'Deletion failed; retried automatically',
  erasure_completed: 'Deletion completed',
  completion_email_sent: 'Completion email sent',
  completion_email_failed: 'Completion email could not be sent; retried',
  hard_purged: 'Remaining request data purged',
}

/** Areas whose rows are kept without what identifies the person (plugins/dsar/erase/): the log says anonymised there. */
const ANONYMISED_AREAS = new Set(['visits', 'page_events', 'conversions'])

function eventText(entry: { event: string, detail?: string }): string {
  if (entry.event === 'erased' && entry.detail && ANONYMISED_AREAS.has(entry.detail)) return 'Anonymised'
  return EVENT_TEXT[entry.event] ?? entry.event
}

/** The human status page: the proof record, readable, no scripts. */
export function renderStatusPage(proof: ProofRecord, info: { code: string, siteName: string, proofUrl: string }): string {
  const rows: [string, string][] = [
    ['Status', STATUS_TEXT[proof.status]],
    ['Email', proof.maskedEmail],
    ['Confirmation code', info.code],
    ['Received', time(proof.received_at)],
    ['Completed', time(proof.completed_at)],
    ['Data stores affected', String(proof.integrations_affected)],
    ['Visit records anonymised', String(proof.session_records_anonymised)],
    ['Completion email sent', time(proof.completion_email_sent_at)],
    ['Request data purged by', time(proof.hard_purge_at)],
  ]
  const log = proof.merchant_log.map((entry) => `<tr><td>${esc(time(entry.at))}</td><td>${esc(eventText(entry))}${
    entry.detail ? `: ${esc(entry.detail)}` : ''}${entry.records !== undefined ? ` (${entry.records} record${entry.records === 1 ? '' : 's'})` : ''}</td></tr>`).join('\n')
  return layout(`Data deletion request at ${info.siteName}`, `
<h1>Data deletion request at ${esc(info.siteName)}</h1>
<p class="status status-${proof.status}" role="status">${esc(STATUS_TEXT[proof.status])}</p>
<dl>
${rows.map(([term, value]) => `<dt>${esc(term)}</dt><dd>${esc(value)}</dd>`).join('\n')}
</dl>
<h2>Log</h2>
<table>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">What</th></tr></thead>
<tbody>
${log}
</tbody>
</table>
<p>Machine-readable proof: <a href="${esc(info.proofUrl)}">${esc(info.proofUrl)}</a></p>`)
}

/**
 * The page behind the emailed link: what will be deleted and one button, a plain form that posts the token (no
 * script). Opening the page changes nothing; the button does.
 */
export function renderConfirmPage(info: { siteName: string, maskedEmail: string, code: string, token: string, action: string, statusUrl: string }): string {
  return layout(`Delete your data at ${info.siteName}?`, `
<h1>Delete your data at ${esc(info.siteName)}?</h1>
<p>Someone, hopefully you, asked ${esc(info.siteName)} to delete the personal data it holds about <strong>${esc(info.maskedEmail)}</strong>.</p>
<dl>
<dt>Confirmation code</dt><dd>${esc(info.code)}</dd>
</dl>
<form method="post" action="${esc(info.action)}">
<input type="hidden" name="token" value="${esc(info.token)}">
<button type="submit">Delete my data</button>
</form>
<p>Nothing is deleted until you press the button. If you did not ask for this, close this page.</p>
<p>Follow the request at any time on its <a href="${esc(info.statusUrl)}">status page</a>.</p>`)
}

export function renderMissingTokenPage(): string {
  return layout('Use the button on the confirmation page', `
<h1>Use the button on the confirmation page</h1>
<p>This confirmation did not carry its token. Open the link from the email again and press the button on that page.</p>`)
}

export function renderUnknownPage(): string {
  return layout('Unknown deletion request', `
<h1>Unknown deletion request</h1>
<p>This link does not belong to any deletion request. Check that it was copied whole from the email.</p>`)
}

export function renderInvalidLinkPage(): string {
  return layout('This link is no longer valid', `
<h1>This link is no longer valid</h1>
<p>The confirmation link is unknown, mistyped or expired (requests are purged 30 days after they were made).
Send a new deletion request from the site if you still want your data deleted.</p>`)
}

function time(value: string | null): string {
  return value ? `${value.slice(0, 10)} ${value.slice(11, 19)}` : '—'
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${esc(title)}</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
.status{padding:.75rem 1rem;border-left:.35rem solid #666;background:#f3f3f3}
.status-completed{border-color:#1a7f37}.status-processing{border-color:#9a6700}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dt{font-weight:600}dd{margin:0}
button{font:inherit;padding:.6rem 1.2rem;border:0;border-radius:.3rem;background:#b42318;color:#fff;cursor:pointer}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`
}
