import { html, type Html } from '../html.ts'
import type { PageContext } from '../page.ts'

/**
 * "Newest" and "Older" links under a newest-first list (queries/paging.ts): Older starts after the last row shown.
 * `keep` is the query string the links carry along (a filter), without `before`.
 */
export function pager(ctx: PageContext, slug: string, before: string | undefined, older: string | null, keep = ''): Html {
  const link = (query: string) => `${ctx.href(slug)}${query ? `?${query}` : ''}`
  const withBefore = (position: string) => [keep, `before=${encodeURIComponent(position)}`].filter(Boolean).join('&')
  return html`<nav class="pager" aria-label="Pages">${before ? html`<a href="${link(keep)}">Newest</a>` : ''}
${older ? html`<a href="${link(withBefore(older))}">Older</a>` : ''}</nav>`
}
