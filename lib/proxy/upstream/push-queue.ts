// An async iterable fed by a producer that cannot wait, such as a socket's data callbacks: it keeps what
// the consumer has not taken yet, asks the producer to pause once `highWater` items wait and to resume
// when they are taken, and cancels the producer when the consumer stops early.

export interface PushQueueFlow {
  pause: () => void
  resume: () => void
  /** The consumer stopped before the end (return() or break): stop producing. */
  cancel: () => void
}

/** Where an attached queue's items go instead of waiting for reads. */
export interface PushSink<T> {
  push: (item: T) => void
  end: () => void
  fail: (err: unknown) => void
}

export interface PushQueue<T> extends AsyncIterable<T> {
  push: (item: T) => void
  /** No more items: the consumer's next read after the last one is done. */
  end: () => void
  /** The consumer's next read after the items already pushed fails with `err`. The first end or failure wins. */
  fail: (err: unknown) => void
  /** Whether end, fail or the consumer's return already closed the queue. */
  readonly closed: boolean
  /**
   * Instead of iterating: hands `sink` the items waiting (and the end or failure, if it came), then every later
   * one as it is pushed, with no promise per item. Returns the producer's flow, for the sink to pause, resume or
   * cancel it. Use one way only, once.
   */
  attach: (sink: PushSink<T>) => PushQueueFlow
}

export function createPushQueue<T> (flow: PushQueueFlow, highWater = 16): PushQueue<T> {
  const items: T[] = []
  let closed = false
  let failure: { err: unknown } | undefined
  let paused = false
  // Reads that found nothing waiting, oldest first (a for-await loop has one at a time; nothing else is assumed).
  const waiting: Array<{ resolve: (r: IteratorResult<T>) => void, reject: (err: unknown) => void }> = []

  /** The queue closed: the first waiting read gets the failure, if any; every other one is done. */
  function settleWaiting (): void {
    for (const w of waiting.splice(0)) {
      if (failure === undefined) {
        w.resolve({ value: undefined, done: true })
        continue
      }
      const { err } = failure
      failure = undefined
      w.reject(err)
    }
  }

  const iterator: AsyncIterator<T> = {
    async next () {
      if (items.length > 0) {
        const value = items.shift() as T
        if (paused && items.length === 0) {
          paused = false
          flow.resume()
        }
        return { value, done: false }
      }
      if (failure !== undefined) {
        const { err } = failure
        failure = undefined
        throw err
      }
      if (closed) return { value: undefined, done: true }
      return await new Promise<IteratorResult<T>>((resolve, reject) => { waiting.push({ resolve, reject }) })
    },
    async return () {
      if (!closed) {
        closed = true
        items.length = 0
        failure = undefined
        settleWaiting()
        flow.cancel()
      }
      return { value: undefined, done: true }
    },
  }

  let target: PushSink<T> | undefined

  return {
    push (item) {
      if (closed) return
      if (target !== undefined) return target.push(item)
      const w = waiting.shift()
      if (w !== undefined) {
        w.resolve({ value: item, done: false })
        return
      }
      items.push(item)
      if (!paused && items.length >= highWater) {
        paused = true
        flow.pause()
      }
    },
    end () {
      if (closed) return
      closed = true
      if (target !== undefined) return target.end()
      settleWaiting()
    },
    fail (err) {
      if (closed) return
      closed = true
      if (target !== undefined) return target.fail(err)
      failure = { err }
      settleWaiting()
    },
    get closed () { return closed },
    attach (sink) {
      for (const item of items.splice(0)) sink.push(item)
      if (paused) {
        paused = false
        flow.resume()
      }
      if (failure !== undefined) sink.fail(failure.err)
      else if (closed) sink.end()
      else target = sink
      failure = undefined
      return flow
    },
    [Symbol.asyncIterator] () { return iterator },
  }
}
