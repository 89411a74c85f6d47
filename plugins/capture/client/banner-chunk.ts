/**
 * The built-in banner as a chunk of its own (GET /script/banner?cop_key=): loaded only when a visitor must be asked.
 * The site's words come with it; a main script rendered before they did passes them itself.
 */
import type { BannerText } from '../protocol.ts'
import { showBanner } from './banner.ts'
import type { Choice } from './consent.ts'
import { readSettings, type BannerSettings } from './settings.ts'

;(window as any).__dcgate_banner = (onChoice: (choice: Choice) => void, texts?: Record<string, BannerText>) =>
  showBanner(onChoice, texts || readSettings<BannerSettings>().bannerText)
