/**
 * Whether initCode is EntryPoint v0.8's EIP-7702 form: at least 2 bytes, its first 20 (zero-padded when
 * shorter) 0x7702 then zeros (Eip7702Support._isEip7702InitCode).
 */
export function isEip7702InitCode(initCode: Uint8Array): boolean {
  if (initCode.length < 2 || initCode[0] !== 0x77 || initCode[1] !== 0x02) return false;
  const end = Math.min(initCode.length, 20);
  for (let i = 2; i < end; i++) if (initCode[i] !== 0) return false;
  return true;
}
