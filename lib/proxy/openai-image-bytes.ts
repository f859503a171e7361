// What image an array of bytes really is, from its magic number. Used to refuse images whose
// declared type lies about their content (the upstream answers those with a vague 400 or worse).

export const SNIFFABLE_IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/heic', 'image/heif', 'image/avif'])

function ascii (bytes: Uint8Array, start: number, end: number): string {
  return Buffer.from(bytes.subarray(start, end)).toString('latin1')
}

/** The image type of these bytes, or undefined when they are not an image we recognise. */
export function sniffImageType (bytes: Uint8Array): string | undefined {
  if (bytes.length >= 8 && bytes[0] === 0x89 && ascii(bytes, 1, 4) === 'PNG' && bytes[4] === 0x0d && bytes[5] === 0x0a) return 'image/png'
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg'
  if (bytes.length >= 6 && (ascii(bytes, 0, 6) === 'GIF87a' || ascii(bytes, 0, 6) === 'GIF89a')) return 'image/gif'
  if (bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'image/webp'
  if (bytes.length >= 2 && ascii(bytes, 0, 2) === 'BM') return 'image/bmp'
  if (bytes.length >= 12 && ascii(bytes, 4, 8) === 'ftyp') {
    const brand = ascii(bytes, 8, 12)
    if (brand === 'avif' || brand === 'avis') return 'image/avif'
    if (['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis'].includes(brand)) return 'image/heic'
    if (['mif1', 'msf1', 'heif'].includes(brand)) return 'image/heif'
  }
  return undefined
}

/** Normalises common aliases (image/jpg, image/x-png). */
export function canonicalImageType (mimeType: string): string {
  const type = mimeType.toLowerCase()
  if (type === 'image/jpg' || type === 'image/pjpeg') return 'image/jpeg'
  if (type === 'image/x-png') return 'image/png'
  return type
}

function sameFamily (a: string, b: string): boolean {
  const heif = new Set(['image/heic', 'image/heif'])
  return a === b || (heif.has(a) && heif.has(b))
}

/**
 * Checks that bytes declared as `mimeType` are that image. Returns an error message, or undefined
 * when they match (or the type is one we cannot check and the bytes are not some other known image).
 */
export function imageMismatch (mimeType: string, bytes: Uint8Array): string | undefined {
  const declared = canonicalImageType(mimeType)
  if (!declared.startsWith('image/')) return `"${mimeType}" is not an image type`
  if (bytes.length === 0) return 'the image is empty'
  const actual = sniffImageType(bytes)
  if (actual !== undefined && !sameFamily(actual, declared)) return `the data is ${actual}, not ${declared}`
  if (actual === undefined && SNIFFABLE_IMAGE_TYPES.has(declared)) return `the data is not a valid ${declared} image`
  return undefined
}
