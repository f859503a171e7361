// A fake Vertex AI endpoint and Google token endpoint for the Vertex backend, on test/support/fake-upstream.ts:
//
//   const vertex = await startFakeVertex(t)     // torn down with t
//   backend options: { backend: 'vertex', vertexEndpoint: vertex.url, projectId: 'proj-1', credentialsFile: vertex.keyFile }
//   or express mode: { backend: 'vertex', vertexEndpoint: vertex.url, apiKey: vertex.apiKey }
//
// The key file is a service-account key made here (an RSA key from node:crypto) whose token_uri is the fake's /token.
// The token endpoint accepts only a JWT-bearer grant signed with that key, issued by the key's client_email and asking
// for the cloud-platform scope (else 400 invalid_grant); project paths then need a bearer token it issued, express
// paths the API key (x-goog-api-key). `vertex.fake` is the FakeUpstream, for replies and recorded requests.
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto'
import type { KeyObject } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { startFakeUpstream } from './fake-upstream.ts'
import type { FakeReply, FakeUpstream } from './fake-upstream.ts'

export const SERVICE_ACCOUNT_EMAIL = 'gatehouse-test@proj-1.iam.gserviceaccount.com'
export const EXPRESS_API_KEY = 'express-key-for-tests'

export interface FakeVertex {
  fake: FakeUpstream
  url: string
  /** A service-account key file whose token_uri is the fake's token endpoint. */
  keyFile: string
  apiKey: string
  /** The JWT grants the token endpoint accepted, their claims decoded. */
  grants: Array<Record<string, unknown>>
}

let keyPair: { privatePem: string, publicKey: KeyObject } | undefined
function testKey (): { privatePem: string, publicKey: KeyObject } {
  if (keyPair === undefined) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    keyPair = { privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, publicKey: createPublicKey(privateKey) }
  }
  return keyPair
}

const refused = (description: string): FakeReply => ({ status: 400, body: { error: 'invalid_grant', error_description: description } })

/** The claims of an RS256 JWT signed by `key`, or undefined. */
function verifiedClaims (jwt: string, key: KeyObject): Record<string, unknown> | undefined {
  const [header, payload, signature] = jwt.split('.')
  if (signature === undefined) return undefined
  const ok = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), key, Buffer.from(signature, 'base64url'))
  return ok ? JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) : undefined
}

export async function startFakeVertex (t: Test): Promise<FakeVertex> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const dir = await mkdtemp(path.join(tmpdir(), 'gatehouse-vertex-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const { privatePem, publicKey } = testKey()
  const keyFile = path.join(dir, 'service-account.json')
  await writeFile(keyFile, JSON.stringify({
    type: 'service_account',
    project_id: 'proj-1',
    private_key_id: 'test-key-1',
    private_key: privatePem,
    client_email: SERVICE_ACCOUNT_EMAIL,
    client_id: '1234567890',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: fake.tokenUri,
  }), { mode: 0o600 })
  const grants: Array<Record<string, unknown>> = []
  fake.acceptedTokens = new Set()
  fake.apiKey = EXPRESS_API_KEY
  fake.tokenGate = form => {
    if (form.grant_type !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return refused(`unsupported grant_type ${form.grant_type}`)
    const claims = verifiedClaims(String(form.assertion ?? ''), publicKey)
    if (claims === undefined) return refused('Invalid JWT Signature.')
    if (claims.iss !== SERVICE_ACCOUNT_EMAIL) return refused('Invalid issuer')
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes('https://www.googleapis.com/auth/cloud-platform')) return refused('Invalid scope')
    grants.push(claims)
    return undefined
  }
  return { fake, url: fake.url, keyFile, apiKey: EXPRESS_API_KEY, grants }
}
