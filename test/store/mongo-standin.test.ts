import t from 'tap'
import { MongoClient } from 'mongodb'
import { startMongoStandIn } from '../support/mongo-standin.ts'
import { mongoStoreSuite } from './mongo-behaviour.ts'
import { createMongoStore } from '../../lib/index.ts'

t.test('MongoDB store over the wire-protocol stand-in', async t => {
  const standIn = await startMongoStandIn()
  t.teardown(() => standIn.close())
  mongoStoreSuite(t, standIn.url)

  t.test('the stand-in answers a command it does not support with an error naming it', async t => {
    const client = new MongoClient(standIn.url)
    t.teardown(() => client.close())
    await t.rejects(client.db('x').command({ collMod: 'users' }), { code: 59, message: /collMod.*stand-in/ })
  })
})

t.test('an unreachable MongoDB stops start-up with a clear error', async t => {
  const standIn = await startMongoStandIn()
  const url = `${standIn.url}/?serverSelectionTimeoutMS=300`
  await standIn.close()
  await t.rejects(createMongoStore({ url, dbName: 'gatehouse' }), { message: /^Cannot start the MongoDB store \(database "gatehouse"\): / })
})
