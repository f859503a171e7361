// The console's page and its built files (lib/console/static-assets.ts).
import type { Route } from '../../http/contract.ts'
import type { ConsoleParts } from '../console-parts.ts'

export function assetRoutes ({ base, route, assets }: ConsoleParts): Route[] {
  const lastSegment = base.slice(base.lastIndexOf('/') + 1)
  return [
    // The page lives at `${base}/`: relative URLs (assets, api) then resolve under the console wherever it is mounted.
    route('GET', '', async () => ({ status: 308, headers: { location: `${lastSegment}/`, 'cache-control': 'no-store' } })),
    route('GET', '/', async (req) => await assets.serve('index.html', req.headers['if-none-match'])),
    route('GET', '/assets/{file}', async (req) => await assets.serve(req.params.file, req.headers['if-none-match'])),
  ]
}
