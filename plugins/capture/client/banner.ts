/**
 * The built-in consent banner: a `<dcgate-consent>` element at the start of <body> (first in keyboard order),
 * its markup and CSS in an open shadow root so the page's CSS cannot reach it. Accept and Reject are equal
 * buttons. It never takes focus by itself.
 */
import type { BannerText } from '../protocol.ts'
import type { Choice } from './consent.ts'

const CSS = ':host{all:initial}'
  + 'div{position:fixed;z-index:2147483647;left:12px;right:12px;bottom:12px;max-width:560px;margin:0 auto;box-sizing:border-box;padding:14px 16px;'
  + 'display:flex;flex-wrap:wrap;align-items:center;gap:10px 12px;background:#fff;color:#111;font:14px/1.4 system-ui,sans-serif;'
  + 'border:1px solid #999;border-radius:8px;box-shadow:0 2px 12px rgba(0,0,0,.25)}'
  + 'p{margin:0;flex:1 1 240px}'
  + 'button{font:inherit;padding:8px 18px;border:1px solid #111;border-radius:6px;background:#fff;color:#111;cursor:pointer}'
  + 'button:hover{background:#eee}button:focus-visible{outline:3px solid #1a56db;outline-offset:2px}'

const ENGLISH: BannerText = {
  message: 'This site measures visits and ad results with first-party cookies and a device identifier. Do you allow it?',
  accept: 'Accept',
  reject: 'Reject',
}

const escape = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * The site's words in the visitor's language: an exact tag ('fr-ca'), else the same language ('fr', then any 'fr-…'),
 * else the first language the site gave (its own, most likely); the built-in English when it gave none.
 */
export function bannerText(texts: Record<string, BannerText> | undefined, languages: readonly string[]): BannerText {
  if (!texts) return ENGLISH
  const wanted = languages.map((tag) => tag.toLowerCase())
  const own = (tag: string) => Object.prototype.hasOwnProperty.call(texts, tag)
  for (const tag of wanted) if (own(tag)) return texts[tag]!
  for (const tag of wanted) {
    const primary = tag.split('-')[0]!
    if (own(primary)) return texts[primary]!
    const match = Object.keys(texts).find((lang) => lang.split('-')[0] === primary)
    if (match) return texts[match]!
  }
  return Object.values(texts)[0] ?? ENGLISH
}

function html(text: BannerText): string {
  return `<style>${CSS}</style><div role="dialog" aria-modal="false" aria-labelledby="m"><p id="m">${escape(text.message)}</p>`
    + `<button type="button" value="denied">${escape(text.reject)}</button><button type="button" value="granted">${escape(text.accept)}</button></div>`
}

/** Shows the banner once the body exists, in the visitor's language when the site gave it; the returned function removes it. */
export function showBanner(onChoice: (choice: Choice) => void, texts?: Record<string, BannerText>): () => void {
  const host = document.createElement('dcgate-consent')
  const root = host.attachShadow({ mode: 'open' })
  const languages = navigator.languages?.length ? navigator.languages : [navigator.language || 'en']
  root.innerHTML = html(bannerText(texts, languages))
  root.addEventListener('click', (event) => {
    const value = (event.target as HTMLButtonElement).value
    if (value === 'granted' || value === 'denied') onChoice(value)
  })
  const mount = (): void => void document.body.prepend(host)
  if (document.body) mount()
  else document.addEventListener('DOMContentLoaded', mount)
  return () => host.remove()
}
