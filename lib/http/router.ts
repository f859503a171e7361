import type { Route } from './contract.ts'

// Matches request paths against Hapi-style templates (`/a/{id}`, `/a/{rest*}`, `/a/{opt?}`) so that
// node:http and fetch hosts route exactly like the Hapi gateway: literal segments beat parameters,
// parameters beat wildcards.

interface Segment { literal?: string, param?: string, wildcard?: boolean, optional?: boolean }

interface CompiledRoute { route: Route, segments: Segment[], score: string }

export interface RouteMatch {
  route: Route
  params: Record<string, string>
}

export interface Router {
  /** The route for this method and path; `methodNotAllowed` when the path exists under another method. */
  match (method: string, path: string): RouteMatch | { route: undefined, methodNotAllowed: boolean }
}

function compile (route: Route): CompiledRoute {
  const segments = route.path.split('/').slice(1).map((part): Segment => {
    const m = /^\{(\w+)(\*|\?)?\}$/.exec(part)
    if (m === null) return { literal: part }
    return { param: m[1], wildcard: m[2] === '*', optional: m[2] === '?' }
  })
  // Lower scores sort first: literal (0) before param (1) before wildcard (2), segment by segment.
  const score = segments.map(s => s.literal !== undefined ? '0' : s.wildcard === true ? '2' : '1').join('')
  return { route, segments, score }
}

function decode (value: string): string {
  try { return decodeURIComponent(value) } catch { return value }
}

function matchSegments (segments: Segment[], parts: string[]): Record<string, string> | null {
  const params: Record<string, string> = {}
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]
    if (seg.wildcard === true) {
      params[seg.param as string] = parts.slice(i).map(decode).join('/')
      return params
    }
    const part = parts[i]
    if (part === undefined || part === '') {
      if (seg.optional === true && i === segments.length - 1) return params
      if (part === undefined) return null
    }
    if (seg.literal !== undefined) {
      if (seg.literal !== part) return null
    } else {
      params[seg.param as string] = decode(part)
    }
  }
  return parts.length === segments.length ? params : null
}

export function createRouter (routes: readonly Route[]): Router {
  const compiled = routes.map(compile).sort((a, b) => a.score < b.score ? -1 : a.score > b.score ? 1 : 0)
  // Routes of literal segments only match their path exactly and sort before every other, so a path one of them
  // takes under this method is found by its text (in sorted order) without trying each route.
  const literal = new Map<string, CompiledRoute[]>()
  for (const c of compiled) {
    if (!c.segments.every(s => s.literal !== undefined)) continue
    literal.set(c.route.path, [...literal.get(c.route.path) ?? [], c])
  }
  const takes = (route: Route, method: string): boolean => route.method === '*' || route.method === method || (method === 'HEAD' && route.method === 'GET')
  return {
    match (method, path) {
      const exact = literal.get(path)
      if (exact !== undefined) for (const c of exact) if (takes(c.route, method)) return { route: c.route, params: {} }
      const parts = path.split('/').slice(1)
      let methodNotAllowed = false
      for (const c of compiled) {
        const params = matchSegments(c.segments, parts)
        if (params === null) continue
        if (takes(c.route, method)) return { route: c.route, params }
        methodNotAllowed = true
      }
      return { route: undefined, methodNotAllowed }
    }
  }
}
