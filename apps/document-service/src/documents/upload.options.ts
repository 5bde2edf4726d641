import type { MulterModuleOptions } from '@nestjs/platform-express';
import { diskStorage } from 'multer';

import type { DocumentConfig } from '../config/document.config';

/**
 * How multipart uploads are read. The file streams to a temporary file (memory stays flat
 * whatever its size); a larger one is refused with 413 and its partial file removed. The other
 * parts are small JSON fields (title, metadata, tags, knowledge bases, ACL), so their number and
 * size are capped too: multer's defaults allow any number of fields of up to 1 MB each, held in
 * memory. A request over a cap is refused with 400 before the handler runs.
 */
export function uploadOptions(
  config: Pick<DocumentConfig, 'UPLOAD_TMP_DIR' | 'MAX_UPLOAD_BYTES'>,
): MulterModuleOptions {
  return {
    storage: diskStorage({ destination: config.UPLOAD_TMP_DIR }),
    limits: {
      fileSize: config.MAX_UPLOAD_BYTES,
      files: 1,
      fields: 16,
      parts: 17,
      fieldNameSize: 64,
      fieldSize: 256 * 1024,
    },
  };
}
