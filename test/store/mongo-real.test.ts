// The store conformance suite against a real MongoDB: CI runs it with a mongo:8 service container.
import t from 'tap'
import { mongoStoreSuite } from './mongo-behaviour.ts'

const url = process.env.MONGODB_URL
if (url === undefined || url === '') {
  t.test('MongoDB store against a real server', { skip: 'MONGODB_URL is not set: nothing ran against a real MongoDB' }, () => {})
} else {
  t.test(`MongoDB store against a real server (${url.replace(/\/\/[^@/]*@/, '//')})`, async t => {
    mongoStoreSuite(t, url)
  })
}
