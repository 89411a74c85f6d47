import type { ConfigInput } from './schema.ts'

/** Types the config file; calling it is optional, a plain default-exported object works the same. */
export function defineConfig(config: ConfigInput): ConfigInput {
  return config
}
