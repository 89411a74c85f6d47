// Every CRM poller registered in adapters/index.ts runs the contract: its checks live in test/crm/<name>.suite.ts.
// Run one with `-t "<name>"`, e.g. `-t hubspot`.
import { contractsRun } from '../contract/crm-poller.ts'
import { runSuites } from '../contract/registered.ts'

await runSuites(new URL('./', import.meta.url), 'crm-poller', contractsRun)
