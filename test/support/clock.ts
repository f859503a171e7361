// Clocks for tests whose outcome would otherwise depend on when the wall clock turns a minute or a day.

/**
 * A clock that runs with the real one from the start of the minute it was made in. The rate limiter counts in fixed
 * minute windows of its clock, so a test with `rpm: 2` that expects its third call refused would pass or fail by
 * whether the wall clock turned a minute between its calls; from the start of a minute, a test has 60 s of one window.
 */
export function minuteStartClock (): () => Date {
  const offset = Date.now() % 60_000
  return () => new Date(Date.now() - offset)
}
