import { defineConfig } from '../core/index.ts'
import config from './dcgate.config.ts'

// What compose.yaml runs: your config/dcgate.config.ts (sites, plugins, destinations) as it is, behind compose's
// Caddy. Caddy reaches dcgate over compose's private network, so its X-Forwarded-For is trusted from private
// addresses only; DCGATE_BASE_URL is the https address Caddy serves (compose.yaml builds it from DCGATE_DOMAIN).
export default defineConfig({
  ...config,
  server: { ...config.server, trustProxy: ['private'], baseUrl: process.env.DCGATE_BASE_URL },
})
