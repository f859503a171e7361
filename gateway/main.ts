// `npm start`: configuration from the environment, then the gateway in the foreground until
// SIGTERM/SIGINT, which drain it gracefully and exit 0. A bad configuration (a variable, or an option the library
// refuses as it builds the services) prints one line and exits 1; an uncaught exception is logged and exits 1.
import { ConfigurationError } from '../lib/index.ts'
import { configurationErrorLine, loadConfig } from './config.ts'
import { createGateway } from './server.ts'
import { shutdownTracing } from './tracing.ts'

function fatal (message: string): never {
  process.stderr.write(message + '\n')
  process.exit(1)
}

async function main (): Promise<void> {
  const gateway = await createGateway(loadConfig(process.env))

  // The log destination is asynchronous: let it write its last lines, and the tracer its last spans.
  // A collector that is down fails the last export: that is logged, not left to crash the process.
  const exit = (code: number): void => {
    const flushAndExit = (): void => { gateway.logger.flush(() => process.exit(code)) }
    shutdownTracing().then(flushAndExit, (err: unknown) => {
      gateway.logger.warn({ err }, 'tracing: the last spans could not be exported')
      flushAndExit()
    })
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
  // A bug that escapes every handler: logged as a JSON line like the rest, with the lines still batched written
  // first (the destination writes synchronously), then exit 1 so the orchestrator restarts a clean process.
  process.on('uncaughtException', (err: unknown) => {
    try {
      gateway.logger.fatal({ err }, 'uncaught exception: exiting')
      gateway.logger.flush()
    } catch {
      // The log itself is what broke (stdout gone, say): the error still reaches stderr.
      process.stderr.write(`uncaught exception: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`)
    } finally {
      process.exit(1)
    }
  })
  await gateway.start()
}

main().catch((err: unknown) => {
  if (err instanceof ConfigurationError) fatal(configurationErrorLine(err, process.env))
  fatal(`Gatehouse failed to start: ${err instanceof Error ? err.message : String(err)}`)
})
