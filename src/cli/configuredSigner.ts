import { existsSync } from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../config/config.js';
import type { SignerSetting } from '../config/signerSettings.js';
import type { ChainCommandContext } from './commands.js';

/**
 * The paymaster signer's source for a chain command that uses it (`signer …`, `paymaster deploy` without
 * `--signer`, `--pkcs11-key`), or a configuration refusal (exit 78) naming the command and what to set. The development
 * default, `<dataDir>/signer.key`, is read only when it exists: the service creates it on its first start, and a
 * command that made one here would leave a plain-text key in whatever directory it ran in (issue 33).
 */
export function configuredSigner(ctx: ChainCommandContext, usedBy: string): SignerSetting {
  if ('problems' in ctx.signer)
    throw new ConfigError(ctx.signer.problems.map((p) => `${usedBy} uses the paymaster signer: ${p}`));
  const setting = ctx.signer.setting;
  if (setting.kind === 'dataDir') {
    const file = path.join(setting.dataDir, 'signer.key');
    if (!existsSync(file)) {
      throw new ConfigError([
        `${usedBy} uses the paymaster signer: none is set (PATRON_SIGNER_KEYSTORE, PATRON_SIGNER_PKCS11_MODULE, PATRON_SIGNER_KMS_KEY_ID or PATRON_SIGNER_PRIVATE_KEY) and the development default ${file} does not exist (the service creates it on its first start; set PATRON_DATA_DIR to the service's)`,
      ]);
    }
  }
  return setting;
}
