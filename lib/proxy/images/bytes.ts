// What image an array of bytes really is, from its magic number, and the type an image is sent upstream
// with. Clients often label images wrongly (a PNG as image/jpeg); the vendors' own endpoints go by the
// bytes, so the proxy sends the type the bytes show. Only bytes that are no image the upstream accepts are
// refused (the upstream would answer those with a vague 400 or worse).

/** The image types Gemini accepts as input (Google's image understanding docs). */
const SUPPORTED_IMAGE_TYPES: readonly string[] = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']

const AVIF_BRANDS = new Set(['avif', 'avis'])
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis'])
const HEIF_BRANDS = new Set(['mif1', 'msf1', 'heif'])

function ascii (bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.subarray(start, end)).toString('latin1')
}

/** The brands of an ISO BMFF `ftyp` box at the start of the bytes: the major one, then the compatible ones. */
function ftypBrands (bytes: Uint8Array): string[] {
  const size = Math.min(bytes.length, ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0)
  const brands = [ascii(bytes, 8, 12)]
  for (let at = 16; at + 4 <= size; at += 4) brands.push(ascii(bytes, at, at + 4))
  return brands
}

/** The image type of these bytes, or undefined when they are not an image we recognise. */
export function sniffImageType (bytes: Uint8Array): string | undefined {
  if (bytes.length >= 8 && bytes[0] === 0x89 && ascii(bytes, 1, 4) === 'PNG' && bytes[4] === 0x0d && bytes[5] === 0x0a) return 'image/png'
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) return 'image/gif'
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  if (bytes.length >= 2 && ascii(bytes, 0, 2) === 'BM') return 'image/bmp'
  if (bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp') {
    // AVIF files also name the HEIF brand mif1 as compatible: AVIF is looked for first.
    const brands = ftypBrands(bytes)
    if (brands.some(b => AVIF_BRANDS.has(b))) return 'image/avif'
    if (brands.some(b => HEIC_BRANDS.has(b))) return 'image/heic'
    if (brands.some(b => HEIF_BRANDS.has(b))) return 'image/heif'
  }
  return undefined
}

/** Normalises common aliases (image/jpg, image/x-png). */
function canonicalImageType (mimeType: string): string {
  const type = mimeType.toLowerCase()
  if (type === 'image/jpg' || type === 'image/pjpeg') return 'image/jpeg'
  if (type === 'image/x-png') return 'image/png'
  return type
}

/**
 * The type to send an image declared as `declared` with: the one its bytes show, when that is a type the
 * upstream accepts, whatever was declared. Otherwise `error` says why the bytes are refused.
 * `bytes` may be only the first ones (a data URL's head): every magic number checked is within the first 48.
 */
export function imageTypeOf (declared: string, bytes: Uint8Array): { mimeType: string } | { error: string } {
  if (bytes.length === 0) return { error: 'the image is empty' }
  const actual = sniffImageType(bytes)
  if (actual !== undefined && SUPPORTED_IMAGE_TYPES.includes(actual)) return { mimeType: actual }
  const supported = 'PNG, JPEG, WEBP, HEIC or HEIF'
  if (actual !== undefined) return { error: `the data is ${actual}, which the model does not accept; send ${supported}` }
  const type = canonicalImageType(declared)
  if (!type.startsWith('image/')) return { error: `"${declared}" is not an image type and the data is no image the model accepts (${supported})` }
  return { error: `the data is not a valid ${type} image, nor any image the model accepts (${supported})` }
}
