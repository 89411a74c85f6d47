import { defineConfig } from '../core/index.ts'

// The single config file. Secrets belong in the environment: read them here with process.env.
// Every key is described in docs/configuration.md.
export default defineConfig({
  server: {
    port: 3000,
    // baseUrl: 'https://track.example.com',
  },
  dataDir: '.data',
  database: { url: process.env.DATABASE_URL },
  storage: { url: process.env.REDIS_URL },
  plugins: ['capture', 'intake', 'release', 'export', 'dsar', 'email-risk', 'segment', 'dashboard'],
  sites: [
    {
      id: 'demo',
      name: 'Demo shop',
      domains: ['localhost', 'shop.example.com'],
      plan: 'free',
      events: [
        { key: 'demo_booked', name: 'Demo booked', sendsAs: 'Schedule', release: 'when_qualified' },
      ],
      deletion: { enabled: true },
      consent: { banner: 'eu' },
    },
  ],
})
