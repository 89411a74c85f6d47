import type { AdminClient } from '../admin-client.ts'
import { CliError, type Output } from '../output.ts'
import type { VerifyDomainAnswer } from '../../sites/verify-domain.ts'

const USAGE = 'Usage: dcgate sites verify-domain <site-id>'

/**
 * `dcgate sites verify-domain <site-id>`: asks the running server to check the site's firstPartyHost now
 * (it stores the outcome, so every instance serves the host) and prints it. Exits 1 when it is not verified,
 * after printing the reason and the record to create; the one-line error goes to stderr as for every command.
 */
export async function verifyDomainCommand(client: AdminClient, out: Output, args: string[]): Promise<void> {
  const [siteId, extra] = args
  if (!siteId || extra !== undefined) throw new CliError(USAGE, 2)
  const answer = await client.request<VerifyDomainAnswer>('POST', `/sites/${encodeURIComponent(siteId)}/verify-domain`)
  out.result(answer, () => (answer.verified ? verifiedText(answer) : notVerifiedText(answer)))
  if (!answer.verified) {
    throw new CliError(`${answer.host} is not verified: ${answer.reason ?? 'unknown reason'}`, 1)
  }
}

function verifiedText(answer: VerifyDomainAnswer): string {
  return [
    `${answer.host} is verified for site ${answer.site_id} (points to ${answer.target ?? answer.script_host}).`,
    `A certificate is issued on the first HTTPS request. Change the script tag's host to https://${answer.host}, keeping the cop_key.`,
  ].join('\n')
}

function notVerifiedText(answer: VerifyDomainAnswer): string {
  const { record } = answer
  return [
    `${answer.host} is not verified for site ${answer.site_id}: ${answer.reason ?? 'unknown reason'}`,
    '',
    ...(answer.temporary
      ? ['The DNS lookup failed; run this again in a minute.']
      : [
          'Create this DNS record at the provider of the site\'s domain:',
          '',
          `  ${record.name}.  CNAME  ${record.value}.`,
          '',
          'Behind a CDN proxy (e.g. Cloudflare), set it to DNS only (grey cloud), not proxied.',
          `Then run: dcgate sites verify-domain ${answer.site_id}`,
        ]),
  ].join('\n')
}
