// Loaded into a spawned gateway with --import: SIGUSR2 makes it throw an exception that no handler catches,
// as a bug would, so a test can see what the process does with it.
process.on('SIGUSR2', () => {
  setImmediate(() => { throw new Error('boom: a bug nobody caught') })
})
