/** Redis Cluster key slot (CRC16/XMODEM of the hash tag, mod 16384), to route WAIT to a key's node. */
const TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let j = 0; j < 8; j++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

export function clusterKeySlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ TABLE[((crc >> 8) ^ byte) & 0xff]!;
  return crc % 16384;
}
