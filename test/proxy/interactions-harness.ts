// A gateway on the fake Gemini API with one member (alice) holding a key, for the Interactions tests; not a test file.
import type { Test } from 'tap'
import { GoogleGenAI } from '@google/genai'
import { startGateway } from '../support/gateway.ts'
import type { StartedGateway } from '../support/gateway.ts'
import { startFakeUpstream } from '../support/fake-upstream.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { ADMIN, keyUser } from '../support/gateway-keys.ts'
import type { KeyUser } from '../support/gateway-keys.ts'
import { PASSWORD } from './harness.ts'

export interface Setup { url: string, fake: FakeUpstream, alice: KeyUser, gateway: StartedGateway }

export async function setup (t: Test, env: Record<string, string> = {}): Promise<Setup> {
  const fake = await startFakeUpstream()
  t.teardown(() => fake.close())
  const gateway = await startGateway({
    ...ADMIN,
    GEMINI_BACKEND: 'gemini-api',
    GEMINI_API_KEY: 'upstream-key',
    GEMINI_API_ENDPOINT: fake.url,
    GEMINI_AUTH_PASSWORD: PASSWORD,
    LOG_LEVEL: 'silent',
    ...env,
  })
  t.teardown(() => gateway.close())
  const alice = await keyUser(gateway.url, 'alice_interacts')
  return { url: gateway.url, fake, alice, gateway }
}

export const genai = (url: string, key: string): GoogleGenAI => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url, timeout: 20000, apiVersion: 'v1beta', retryOptions: { attempts: 1 } } })
