// The registry of the proxy's client surfaces (docs/model-proxy.md, "Adding a surface"): one line each. Routes, the
// usage rows' surface names, preflights and error shapes derive from these declarations (./routes.ts).
import type { SurfaceDeclaration } from './call/surface.ts'
import { chatSurface } from './chat/surface.ts'
import type { ChatRequest } from './chat/request-schema.ts'
import { interactionsSurface } from './interactions/surface.ts'
import { messagesSurface } from './messages/surface.ts'
import { modelListSurface } from './model-list/surface.ts'
import { nativeSurface } from './native/surface.ts'
import { responsesSurface } from './responses/surface.ts'
import type { ResponsesSettings } from './responses/settings.ts'

/** The settings of the surfaces that have their own, built by createProxy and handed to those surfaces only. */
export interface SurfaceSettings {
  validateChat: (body: unknown) => ChatRequest
  responses: ResponsesSettings
}

export function registeredSurfaces (settings: SurfaceSettings): SurfaceDeclaration[] {
  return [
    chatSurface(settings.validateChat),
    messagesSurface,
    modelListSurface,
    nativeSurface,
    responsesSurface(settings.responses),
    interactionsSurface,
  ]
}
