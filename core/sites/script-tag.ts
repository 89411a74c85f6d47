/** The tracking script's tag id; the script finds itself by it, so it must never change. */
export const SCRIPT_TAG_ID = 'dcgate-script'

/** The tag a site owner pastes into every page. */
export function scriptTag(scriptHost: string, copKey: string): string {
  const src = `${scriptHost.replace(/\/+$/, '')}/script?cop_key=${encodeURIComponent(copKey)}`
  return `<script id="${SCRIPT_TAG_ID}" async src="${src}"></script>`
}
