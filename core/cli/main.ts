import { parseArgs } from 'node:util'
import { loadConfigFile, resolveConfigPath } from '../config/load.ts'
import type { ResolvedConfig } from '../config/schema.ts'
import { BootError } from '../errors.ts'
import { createAdminClient } from './admin-client.ts'
import { keysCommand } from './commands/keys.ts'
import { sitesCommand } from './commands/sites.ts'
import { verifyDomainCommand } from './commands/verify-domain.ts'
import { dataCommand, type UpdateData } from './commands/data.ts'
import { heldCommand } from './commands/held.ts'
import { usageCommand } from './commands/usage.ts'
import { deliveriesCommand } from './commands/deliveries.ts'
import { CliError, createOutput } from './output.ts'
import type { PluginCatalog } from '../plugin.ts'
import type { AnyDefinition } from '../registry.ts'

/** What this build of dcgate is made of: given by the entry point (dcgate.ts), the composition root. */
export interface BuiltIns {
  /** Loaded only by the commands that run the server stack, so the admin commands start fast. */
  load: () => Promise<{ plugins: PluginCatalog, adapters: readonly AnyDefinition[] }>
  /** `dcgate data update`: the capture plugin's list updater, loaded when the command runs. */
  updateData?: UpdateData
}

/** Commands that open the database or run plugins: their config is checked in full, plugin sections included. */
const SERVER_COMMANDS = new Set(['start', 'migrate'])

const HELP = `dcgate: conversion tracking, data export and data deletion

Usage: dcgate <command> [options]

Commands:
  start [--config F] [--port N]                 run the server
  migrate                                       apply database migrations
  sites list                                    list configured sites
  sites show <id>                               cop_key, release secret and script tag of a site
  sites export <id>                             a site made in the dashboard, as config for dcgate.config.ts
  sites verify-domain <id>                      check a site's firstPartyHost CNAME now
  keys create --site <id> --name <name>         create a private key (printed in full once)
  keys list --site <id>                         list a site's keys (prefixes only)
  keys delete <prefix> --site <id>              delete a key; it stops working at once
  deliveries list --site <id> [--status S]      the delivery report (S: pending retrying sent failed skipped)
  deliveries retry <delivery-id> --site <id>    replay one failed delivery of the site
  deliveries retry --failed --site <id>         replay every failed delivery of the site
  held list --site <id> [--status S]            held conversions (S: held released dropped expired)
  held drop <id> --site <id>                    drop a held conversion (not a fit): never sent
  usage --site <id>                             email checks: free left, billable, per month
  data update [--only tor-exits,cloud-aws]      download fresh Tor exit and cloud provider lists (needs the network)

Options:
  --config F   config file (.ts, .mjs or .js); default DCGATE_CONFIG or config/dcgate.config.ts
  --url U      admin API of the running server; default DCGATE_URL or http://127.0.0.1:<port>
  --json       machine-readable output
  -h, --help   this help`

const COMMANDS = ['start', 'migrate', 'sites', 'keys', 'deliveries', 'held', 'usage', 'data']

async function main(argv: string[], builtIns: BuiltIns): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      url: { type: 'string' },
      site: { type: 'string' },
      name: { type: 'string' },
      status: { type: 'string' },
      only: { type: 'string' },
      failed: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  const [command, ...rest] = positionals
  if (values.help || !command || command === 'help') {
    process.stdout.write(`${HELP}\n`)
    return
  }
  if (!COMMANDS.includes(command)) throw new CliError(`Unknown command "${command}". Run dcgate --help.`, 2)
  const out = createOutput(values.json)
  // An admin command only talks to a running server: a plugin section is checked by that server, not here.
  const loaded = SERVER_COMMANDS.has(command) ? await builtIns.load() : undefined
  const config = await loadConfig(values.config, values.port, loaded?.plugins)
  const client = createAdminClient(config, values.url)
  switch (command) {
    // The server stack (ORM, PGlite) loads only for the commands that need it, so the admin commands start fast.
    case 'start': {
      const [{ createLogger }, { handleSignals, startServer }] = await Promise.all([import('../logger.ts'), import('../server.ts')])
      const logger = createLogger()
      handleSignals(await startServer(config, { logger, builtInPlugins: loaded!.plugins, adapters: loaded!.adapters }), logger)
      return
    }
    case 'migrate': return (await import('./commands/migrate.ts')).migrateCommand(config, client, out)
    case 'sites': return rest[0] === 'verify-domain' ? verifyDomainCommand(client, out, rest.slice(1)) : sitesCommand(client, out, rest)
    case 'keys': return keysCommand(client, out, rest, { site: values.site, name: values.name })
    case 'held': return heldCommand(client, out, rest, { site: values.site, status: values.status })
    case 'usage': return usageCommand(client, out, { site: values.site })
    case 'data': return dataCommand(config, out, rest, { only: values.only }, builtIns.updateData)
    case 'deliveries': return deliveriesCommand(client, out, rest, { site: values.site, status: values.status, failed: values.failed })
  }
}

async function loadConfig(file: string | undefined, port: string | undefined, plugins: PluginCatalog | undefined): Promise<ResolvedConfig> {
  if (port !== undefined && !/^\d+$/.test(port)) throw new CliError(`--port must be a whole number, got "${port}"`, 2)
  const env = port === undefined ? process.env : { ...process.env, PORT: port }
  return loadConfigFile(resolveConfigPath(file), env, plugins ?? 'unchecked')
}

/** Runs one `dcgate` command; sets the exit code and prints a failure as one line (a stack trace only at debug level). */
export async function runCli(argv: string[], builtIns: BuiltIns): Promise<void> {
  await main(argv, builtIns).catch((error: unknown) => {
    const usage = (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS') === true
    if (error instanceof BootError) process.stderr.write(`dcgate: ${error.describe()}\n`)
    else process.stderr.write(`dcgate: ${error instanceof Error ? error.message : String(error)}${usage ? ' (run dcgate --help)' : ''}\n`)
    if (process.env.DCGATE_LOG_LEVEL === 'debug' && error instanceof Error) process.stderr.write(`${error.stack}\n`)
    process.exitCode = error instanceof CliError ? error.exitCode : usage ? 2 : 1
  })
}
