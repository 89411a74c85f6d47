import { describe, expect, it } from 'vitest'
import { renderStatusPage } from '../../plugins/dsar/status-page.ts'

// The proof page's log says "Anonymised" for the areas whose rows are kept without the person (visits, page events,
// conversions) and "Deleted" for those whose rows go (identified users, mails).
describe('deletion proof page log', () => {
  it('names anonymised areas as anonymised, deleted ones as deleted', () => {
    const at = new Date().toISOString()
    const page = renderStatusPage({
      status: 'completed', maskedEmail: 'a***@e***.com', received_at: at, completed_at: at, hard_purge_at: at,
      integrations_affected: 3, session_records_anonymised: 2, completion_email_sent_at: null,
      merchant_log: [
        { at, event: 'erased', detail: 'visits', records: 2 },
        { at, event: 'erased', detail: 'conversions', records: 1 },
        { at, event: 'erased', detail: 'identified_users', records: 1 },
      ],
    }, { code: 'abc', siteName: 'Shop', proofUrl: 'https://dcgate.example/public/dsar/proof/abc' })
    expect(page).toContain('Anonymised: visits (2 records)')
    expect(page).toContain('Anonymised: conversions (1 record)')
    expect(page).toContain('Deleted: identified_users (1 record)')
  })
})
