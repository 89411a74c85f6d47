import type { AdminClient } from '../admin-client.ts'
import { CliError, table, type Output } from '../output.ts'

interface Usage {
  site: string
  plan: string
  checks: number
  free_checks: number
  free_left: number
  billable: number
  blocked: boolean
  first_check_at: string | null
  last_check_at: string | null
  months: { month: string, checks: number, billable: number }[]
}

const USAGE = 'Usage: dcgate usage --site <id>'

/** `dcgate usage --site <id>`: the site's email checks (needs the email-risk plugin): free left, billable, per month. */
export async function usageCommand(client: AdminClient, out: Output, options: { site?: string }): Promise<void> {
  if (!options.site) throw new CliError(`--site is required. ${USAGE}`, 2)
  const usage = await client.request<Usage>('GET', `/sites/${encodeURIComponent(options.site)}/email-checks/usage`)
  out.result(usage, () => {
    const lines = [
      `Email checks of site ${usage.site} (plan ${usage.plan}): ${usage.checks} in all, ${usage.free_left} of the first ${usage.free_checks} free left, ${usage.billable} billable`,
    ]
    if (usage.blocked) lines.push('The free checks are used up: further checks answer 429 until the site\'s plan is business or organization.')
    if (usage.months.length) lines.push('', table([['MONTH', 'CHECKS', 'BILLABLE'], ...usage.months.map((m) => [m.month, String(m.checks), String(m.billable)])]))
    return lines.join('\n')
  })
}
