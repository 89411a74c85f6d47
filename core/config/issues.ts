import type { BaseIssue } from 'valibot'

/** `sites[0].destinations.meta.pixelId`: the path an operator can find in their config file. */
export function formatIssuePath(issue: BaseIssue<unknown>, prefix = ''): string {
  let path = prefix
  for (const item of issue.path ?? []) {
    const key = (item as { key?: unknown }).key
    if (typeof key === 'number') path += `[${key}]`
    else path += path ? `.${String(key)}` : String(key)
  }
  return path
}

/** One line per issue, `path: message`, never echoing the offending value (it may be a secret). */
export function formatIssues(issues: readonly BaseIssue<unknown>[], prefix = ''): string[] {
  return issues.map((issue) => {
    const path = formatIssuePath(issue, prefix)
    const message = issue.message.startsWith('Invalid key') && issue.received === 'undefined'
      ? 'is required'
      : issue.message.replace(/(?: but|:)? [Rr]eceived .*$/, '')
    return path ? `${path}: ${message}` : message
  })
}
