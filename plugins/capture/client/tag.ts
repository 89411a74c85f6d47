import { SCRIPT_TAG_ID } from './constants.ts'

export interface Tag {
  /** Where every request goes: the origin of the tag's src plus its path up to `/script`. */
  base: string
  copKey: string
}

/** The base URL and cop_key from the script's own src (`https://t.example/script?cop_key=…`). Pure. */
export function parseTagSrc(src: string | undefined): Tag | undefined {
  try {
    const url = new URL(src || '')
    const copKey = url.searchParams.get('cop_key')
    return copKey ? { base: url.origin + url.pathname.replace(/\/[^/]*$/, ''), copKey } : undefined
  } catch {
    return undefined
  }
}

/** The script's own tag: by its fixed id, else the running script, else any tag loading /script?cop_key=. */
export function findTag(): Tag | undefined {
  const element = document.getElementById(SCRIPT_TAG_ID) || document.currentScript || document.querySelector('script[src*="/script?cop_key="]')
  return parseTagSrc((element as HTMLScriptElement | null)?.src)
}
