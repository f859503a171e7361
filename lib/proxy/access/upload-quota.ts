// The upload byte quota (docs/model-proxy.md, "Upstream resources and their owners"): the bytes a user's keys send
// to /upload/v1beta per UTC day, counted in the store's counters so that replicas sharing one store refuse at one
// threshold. An upload is refused before anything is sent when the day's count, with its declared Content-Length,
// is past the quota; one without a length is cut off (the upstream never gets its end) once it would pass it.
import { fail } from '../../errors.ts'
import type { CounterStore } from '../../store/types.ts'
import type { KeyCaller } from './caller.ts'

/** createProxy's default resources.uploadBytesPerDay (GEMINI_UPLOAD_BYTES_PER_DAY): 10 GiB, five of Google's largest files. */
export const DEFAULT_UPLOAD_BYTES_PER_DAY = 10 * 1024 ** 3

/** Bytes streamed between two adds to the day's counter: one store call per 8 MiB, not per chunk. */
const COUNT_STEP = 8 * 1024 * 1024
const DAY_MS = 86_400_000

export interface UploadQuotaOptions {
  /** Where the day's bytes are counted (a Store's counters); none: uploads are not counted. */
  counters?: CounterStore
  bytesPerDay: number
  now: () => Date
}

export interface UploadQuota {
  /**
   * The body of a key's upload request, counted as it streams; throws UPLOAD_QUOTA_EXCEEDED (429, Retry-After the
   * end of the UTC day) before anything is sent when the user's day is spent, or `declared` bytes would pass it.
   */
  meter (caller: KeyCaller, declared: number | undefined, body: AsyncIterable<Uint8Array> | undefined): Promise<AsyncIterable<Uint8Array> | undefined>
}

export function createUploadQuota (options: UploadQuotaOptions): UploadQuota {
  const { counters, bytesPerDay, now } = options

  function over (at: number): Error {
    const retryAfter = Math.max(1, Math.ceil((DAY_MS - (at % DAY_MS)) / 1000))
    return fail('UPLOAD_QUOTA_EXCEEDED', `This user may upload ${bytesPerDay} bytes a day (UTC) and has used them; retry after the time in Retry-After`, { retryAfter })
  }

  async function * counted (store: CounterStore, key: string, day: Date, at: number, known: number, body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
    const expiresAt = new Date(day.getTime() + DAY_MS + 3_600_000)
    let total = known
    let pending = 0
    try {
      for await (const chunk of body) {
        // Checked before the chunk goes on: the upstream never gets the bytes past the quota, nor the upload's end.
        if (total + pending + chunk.length > bytesPerDay) throw over(at)
        pending += chunk.length
        if (pending >= COUNT_STEP) {
          total = await store.add(key, day, pending, expiresAt)
          pending = 0
          if (total > bytesPerDay) throw over(at)
        }
        yield chunk
      }
    } finally {
      // What went on counts, however the upload ended.
      if (pending > 0) await store.add(key, day, pending, expiresAt).catch(() => {})
    }
  }

  return {
    async meter (caller, declared, body) {
      if (counters === undefined) return body
      const at = now().getTime()
      const day = new Date(at - (at % DAY_MS))
      const key = `upload:bytes:${caller.userId}`
      const used = await counters.get(key, day)
      if (used >= bytesPerDay || used + (declared ?? 0) > bytesPerDay) throw over(at)
      return body === undefined ? body : counted(counters, key, day, at, used, body)
    },
  }
}
