/**
 * The built-in consent banner: a `<dcgate-consent>` element at the start of <body> (first in keyboard order),
 * its markup and CSS in an open shadow root so the page's CSS cannot reach it. Accept and Reject are equal
 * buttons. It never takes focus by itself.
 */
import type { Choice } from './consent.ts'

const CSS = ':host{all:initial}'
  + 'div{position:fixed;z-index:2147483647;left:12px;right:12px;bottom:12px;max-width:560px;margin:0 auto;box-sizing:border-box;padding:14px 16px;'
  + 'display:flex;flex-wrap:wrap;align-items:center;gap:10px 12px;background:#fff;color:#111;font:14px/1.4 system-ui,sans-serif;'
  + 'border:1px solid #999;border-radius:8px;box-shadow:0 2px 12px rgba(0,0,0,.25)}'
  + 'p{margin:0;flex:1 1 240px}'
  + 'button{font:inherit;padding:8px 18px;border:1px solid #111;border-radius:6px;background:#fff;color:#111;cursor:pointer}'
  + 'button:hover{background:#eee}button:focus-visible{outline:3px solid #1a56db;outline-offset:2px}'

const HTML = `<style>${CSS}</style><div role="dialog" aria-modal="false" aria-labelledby="m">`
  + '<p id="m">This site measures visits and ad results with first-party cookies and a device identifier. Do you allow it?</p>'
  + '<button type="button" value="denied">Reject</button><button type="button" value="granted">Accept</button></div>'

/** Shows the banner once the body exists; the returned function removes it. */
export function showBanner(onChoice: (choice: Choice) => void): () => void {
  const host = document.createElement('dcgate-consent')
  const root = host.attachShadow({ mode: 'open' })
  root.innerHTML = HTML
  root.addEventListener('click', (event) => {
    const value = (event.target as HTMLButtonElement).value
    if (value === 'granted' || value === 'denied') onChoice(value)
  })
  const mount = (): void => void document.body.prepend(host)
  if (document.body) mount()
  else document.addEventListener('DOMContentLoaded', mount)
  return () => host.remove()
}
