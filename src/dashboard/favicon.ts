/**
 * The dashboard's icon, /favicon.ico: 16 by 16 pixels in the ICO format (one 32-bit BMP), the
 * header's navy with three white shelves, built once from code (no binary file in the tree).
 */
const SIZE = 16;
const NAVY = [0x3d, 0x21, 0x14, 0xff]; // BGRA of #14213d, the header's colour
const WHITE = [0xff, 0xff, 0xff, 0xff];

function isShelf(x: number, y: number): boolean {
  // Rows counted from the top: three shelves two pixels high, inset from the sides.
  return x >= 3 && x <= 12 && [3, 4, 7, 8, 11, 12].includes(y);
}

function buildIcon(): Buffer {
  const pixels = Buffer.alloc(SIZE * SIZE * 4);
  for (let row = 0; row < SIZE; row++) {
    const y = SIZE - 1 - row; // BMP rows go from the bottom up
    for (let x = 0; x < SIZE; x++) {
      Buffer.from(isShelf(x, y) ? WHITE : NAVY).copy(pixels, (row * SIZE + x) * 4);
    }
  }
  const mask = Buffer.alloc(SIZE * 4); // 1 bit a pixel, rows padded to 32 bits: all opaque
  const info = Buffer.alloc(40);
  info.writeUInt32LE(40, 0); // header size
  info.writeInt32LE(SIZE, 4);
  info.writeInt32LE(SIZE * 2, 8); // the colour image and its mask, stacked
  info.writeUInt16LE(1, 12); // planes
  info.writeUInt16LE(32, 14); // bits a pixel
  info.writeUInt32LE(pixels.length + mask.length, 20);
  const image = Buffer.concat([info, pixels, mask]);
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(SIZE, 6);
  header.writeUInt8(SIZE, 7);
  header.writeUInt16LE(1, 10); // planes
  header.writeUInt16LE(32, 12); // bits a pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18); // where the image starts
  return Buffer.concat([header, image]);
}

export const FAVICON = buildIcon();
export const FAVICON_PATH = '/favicon.ico';
/** A day: the icon changes with a release at most, and browsers ask for it on every page. */
export const FAVICON_CACHE = 'public, max-age=86400';
