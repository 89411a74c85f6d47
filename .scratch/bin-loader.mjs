import 'tsx'
await import('../core/cli/main.ts')
