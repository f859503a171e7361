// Child process for embedded.test.ts: inserts users into the embedded store at the given file forever,
// printing each id once its insert has resolved. The test kills it with SIGKILL and checks the file.
import { randomBytes } from 'node:crypto'
import { createEmbeddedStore } from '../../lib/index.ts'

const store = await createEmbeddedStore({ file: process.argv[2] })
for (;;) {
  await Promise.all(Array.from({ length: 10 }, async () => {
    const id = randomBytes(12).toString('hex')
    await store.users.insert({ id, username: `u${id}`, usernameKey: `u${id}`, passwordHash: 'x', email: null, accessLevel: 'default', dateJoined: new Date() })
    process.stdout.write(`${id}\n`)
  }))
}
