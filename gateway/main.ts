// `npm start`: configuration from the environment, then the gateway in the foreground until
// SIGTERM/SIGINT, which drain it gracefully and exit 0. A bad configuration prints one line and exits 1.
import { loadConfig, ConfigError } from './config.ts'
import type { GatewayConfig } from './config.ts'
import { createGateway } from './server.ts'
import { shutdownTracing } from './tracing.ts'

function fatal (message: string): never {
  process.stderr.write(message + '\n')
  process.exit(1)
}

async function main (): Promise<void> {
  let config: GatewayConfig
  try {
    config = loadConfig(process.env)
  } catch (err) {
    if (err instanceof ConfigError) fatal(err.message)
    throw err
  }
  const gateway = await createGateway(config)

  // The log destination is asynchronous: let it write its last lines, and the tracer its last spans.
  const exit = (code: number): void => {
    shutdownTracing().finally(() => gateway.logger.flush(() => process.exit(code)))
  }
  let signalled = false
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signalled) {
      gateway.logger.warn({ signal }, 'second signal: exiting without waiting')
      exit(1)
      return
    }
    signalled = true
    gateway.logger.info({ signal }, 'signal received')
    gateway.stop().then(() => exit(0), (err: unknown) => {
      gateway.logger.error({ err }, 'shutdown failed')
      exit(1)
    })
  }
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  await gateway.start()
}

main().catch((err: unknown) => {
  fatal(`Gatehouse failed to start: ${err instanceof Error ? err.message : String(err)}`)
})
