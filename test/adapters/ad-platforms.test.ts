// Every ad platform registered in adapters/index.ts runs the contract and its own checks: test/adapters/<name>.suite.ts.
// Run one platform with `-t <name>`, e.g. `-t "contract: meta"`.
import { contractsRun } from '../contract/ad-platform.ts'
import { runSuites } from '../contract/registered.ts'

await runSuites(new URL('./', import.meta.url), 'ad-platform', contractsRun)
