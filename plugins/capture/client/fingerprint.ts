/**
 * The device fingerprint: SHA-256 of local properties only (no network, no third-party code). Computed only after
 * consent allows it. Bump FINGERPRINT_VERSION whenever the recipe changes: hashes of two versions never match.
 */
import type { InferInput } from 'valibot'
import type { Device as DeviceSchema } from '../protocol.ts'

export type Device = InferInput<typeof DeviceSchema>

export const FINGERPRINT_VERSION = 1

export function toHex(buffer: ArrayBuffer): string {
  let hex = ''
  for (const byte of new Uint8Array(buffer)) hex += (byte < 16 ? '0' : '') + byte.toString(16)
  return hex
}

/** Hashes the properties; confidence is the share of them that could be read (not undefined/empty). Pure. */
export async function toDevice(parts: unknown[], subtle: SubtleCrypto = crypto.subtle): Promise<Device> {
  const hash = toHex(await subtle.digest('SHA-256', new TextEncoder().encode(JSON.stringify(parts))))
  const known = parts.filter((part) => part !== undefined && part !== null && part !== '').length
  return { hash, short: hash.slice(0, 12), confidence: parts.length ? Math.round((known / parts.length) * 100) / 100 : 0, version: FINGERPRINT_VERSION }
}

function read<T>(get: () => T): T | undefined {
  try {
    return get()
  } catch {
    return undefined
  }
}

function canvasDigest(): string | undefined {
  const canvas = document.createElement('canvas')
  canvas.width = 220
  canvas.height = 30
  const context = canvas.getContext('2d')
  if (!context) return undefined
  context.textBaseline = 'top'
  context.font = '14px Arial'
  context.fillStyle = '#f60'
  context.fillRect(100, 1, 62, 20)
  context.fillStyle = '#069'
  context.fillText('dcgate, fp \u{1F60A} 0.1', 2, 15)
  return canvas.toDataURL()
}

function webgl(): string | undefined {
  const gl = document.createElement('canvas').getContext('webgl')
  if (!gl) return undefined
  const info = gl.getExtension('WEBGL_debug_renderer_info')
  const value = `${gl.getParameter(info ? info.UNMASKED_VENDOR_WEBGL : gl.VENDOR)}~${gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER)}`
  gl.getExtension('WEBGL_lose_context')?.loseContext()
  return value
}

/** The fingerprint of this browser, or undefined where crypto.subtle is missing (plain http). */
export async function fingerprint(): Promise<Device | undefined> {
  if (!crypto.subtle) return undefined
  const nav = navigator as Navigator & { deviceMemory?: number }
  return toDevice([
    read(() => `${screen.width}x${screen.height}x${screen.availWidth}x${screen.availHeight}`),
    read(() => screen.colorDepth),
    read(() => devicePixelRatio),
    read(() => Intl.DateTimeFormat().resolvedOptions().timeZone),
    read(() => navigator.languages?.join(',')),
    read(() => navigator.platform),
    read(() => navigator.hardwareConcurrency),
    read(() => nav.deviceMemory),
    read(() => navigator.maxTouchPoints),
    read(canvasDigest),
    read(webgl),
  ])
}
