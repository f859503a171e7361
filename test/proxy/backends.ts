// Every backend the proxy serves from, described for test/proxy/backend-conformance.test.ts: how each is made on the
// repo's Google fakes. Not a test file itself (only *.test.ts run). A backend added to createBackend adds its entry
// here and so gets every rule of the Backend contract (lib/proxy/upstream/backend.ts) checked.
import type { BackendOptions } from '../../lib/index.ts'
import type { FakeUpstream } from '../support/fake-upstream.ts'
import { credentialsObject } from '../support/credentials-files.ts'

export interface BackendUnderTest {
  /** Backend.name, and the fake's `api` for its calls. */
  name: 'code-assist' | 'gemini-api' | 'vertex'
  options: (fake: FakeUpstream) => BackendOptions
  /** The GenerateContentRequest as it reached the upstream (Code Assist wraps it in its envelope). */
  sentRequest: (body: any) => any
}

export const BACKENDS: readonly BackendUnderTest[] = [
  {
    name: 'code-assist',
    options: fake => ({ credentials: credentialsObject('authorized-user', { tokenUri: fake.tokenUri, projectId: 'proj-1' }), codeAssistEndpoint: fake.url }),
    sentRequest: body => body?.request,
  },
  {
    name: 'gemini-api',
    options: fake => ({ backend: 'gemini-api', apiKey: 'test-api-key', geminiApiEndpoint: fake.url }),
    sentRequest: body => body,
  },
  {
    name: 'vertex',
    options: fake => ({ backend: 'vertex', apiKey: 'express-key', vertexEndpoint: fake.url }),
    sentRequest: body => body,
  },
]
