/** The built-in banner as a chunk of its own (GET /script/banner): loaded only when a visitor must be asked. */
import { showBanner } from './banner.ts'

;(window as any).__dcgate_banner = showBanner
