import { InvalidArgumentError } from '@holdfast/core';
import { slotOf } from '@holdfast/core/workspace';
import { describe, expect, it } from 'vitest';

// CRC16-XMODEM over the UTF-8 bytes, written out bit by bit: what Redis Cluster computes.
function referenceSlot(value: string): number {
  let crc = 0;
  for (const byte of Buffer.from(value, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

describe('slotOf', () => {
  it("is Redis Cluster's slot of the string hashed whole", () => {
    // CLUSTER KEYSLOT values of Redis's own documentation and the CRC16 check value.
    expect(slotOf('foo')).toBe(12182);
    expect(slotOf('123456789')).toBe(0x31c3);
    expect(slotOf('')).toBe(0);
  });

  it('hashes the UTF-8 bytes of names that are not ASCII', () => {
    for (const name of ['ü', 'a€b', '😀', 'x'.repeat(50) + 'é', '\u007f\u0080', 'ключ', '鍵:{1}']) {
      expect(slotOf(name)).toBe(referenceSlot(name));
    }
    for (let i = 0; i < 2000; i++) {
      const name = String.fromCodePoint(...Array.from({ length: 1 + (i % 7) }, (_, j) => ((i * 7919 + j * 104729) % 0x2ffff) + 1))
        .replace(/[\ud800-\udfff]/g, 'x');
      expect(slotOf(name)).toBe(referenceSlot(name));
    }
  });
});
