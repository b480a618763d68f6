import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/store.js';
import { listAllIntegrationRows, updateIntegrationRow } from '../../db/queries/integrations.js';
import { withTransaction } from '../../db/transaction.js';
import {
  createKeyFile,
  KEY_FILE_NAME,
  keyFilePath,
  OLD_KEY_FILE_NAME,
  SecretBox,
  type KeySettings,
} from './secret-box.js';

export interface RotationResult {
  /** Integrations whose credentials were re-encrypted. */
  reencrypted: number;
  /** Integrations whose credentials already used the new key. */
  current: number;
  key_id: string;
  key_source: string;
}

/**
 * Re-encrypts every integration's credentials with the current key, in one transaction (a
 * value that decrypts with no known key stops it, and nothing changes).
 *
 * - SECRET_KEY set: its key is the new one; old values are read with OLD_SECRET_KEY or the
 *   key file.
 * - SECRET_KEY unset: a new key file replaces the old one, which is kept as secret.key.old
 *   (still read) until every value is re-encrypted, then removed.
 */
export async function rotateSecretKey(db: Db, settings: KeySettings): Promise<RotationResult> {
  const dir = settings.DATA_DIR;
  let rotatedFile = false;
  if (!settings.SECRET_KEY && fs.existsSync(keyFilePath(dir))) {
    const old = path.join(dir, OLD_KEY_FILE_NAME);
    // A rotation that stopped half-way left secret.key.old: keep it, it may still be needed.
    if (!fs.existsSync(old)) fs.renameSync(keyFilePath(dir), old);
    else fs.rmSync(keyFilePath(dir));
    createKeyFile(path.join(dir, KEY_FILE_NAME));
    rotatedFile = true;
  }
  const box = new SecretBox(settings);
  const key = box.currentKey();
  let reencrypted = 0;
  let current = 0;
  await withTransaction(db, async (trx) => {
    for (const row of await listAllIntegrationRows(trx, true)) {
      if (row.credentials === null) continue;
      if (box.isCurrent(row.credentials)) {
        current++;
        continue;
      }
      await updateIntegrationRow(trx, row.id, {
        credentials: box.encrypt(box.decrypt(row.credentials)),
      });
      reencrypted++;
    }
  });
  if (rotatedFile) fs.rmSync(path.join(dir, OLD_KEY_FILE_NAME), { force: true });
  return { reencrypted, current, key_id: key.id, key_source: key.source };
}
