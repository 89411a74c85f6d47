import type { PluginDefinition } from '../core/plugin.ts'
import capturePlugin from './capture/index.ts'
import dashboardPlugin from './dashboard/index.ts'
import dsarPlugin from './dsar/index.ts'
import emailRiskPlugin from './email-risk/index.ts'
import exportPlugin from './export/index.ts'
import intakePlugin from './intake/index.ts'
import releasePlugin from './release/index.ts'
import segmentPlugin from './segment/index.ts'

/** Built-in plugins by the name used in the config's `plugins` list; an explicit list, no discovery. */
export const builtInPlugins: Readonly<Record<string, PluginDefinition>> = {
  capture: capturePlugin,
  intake: intakePlugin,
  release: releasePlugin,
  export: exportPlugin,
  dsar: dsarPlugin,
  'email-risk': emailRiskPlugin,
  segment: segmentPlugin,
  dashboard: dashboardPlugin,
}
