// Every webhook source registered in adapters/index.ts runs the contract: its checks live in
// test/sources/<name>.suite.ts. Run one with `-t "<name>"`, e.g. `-t shopify`.
import { contractsRun } from '../contract/intake-source.ts'
import { runSuites } from '../contract/registered.ts'

await runSuites(new URL('./', import.meta.url), 'intake-source', contractsRun)
