import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** Tesseract language codes: `eng`, `deu`, `chi_sim`, `script/Latin` is not one. */
export const OCR_LANGUAGE = /^[a-z]{3}(_[a-z]+)?$/;

/**
 * The traineddata of `code` as its npm package ships it (`@tesseract.js-data/<code>`, the LSTM
 * "best_int" model), or undefined when that package is not installed. Nothing is fetched.
 */
export function languageDataFile(code: string): string | undefined {
  if (!OCR_LANGUAGE.test(code)) return undefined;
  try {
    const manifest = require.resolve(`@tesseract.js-data/${code}/package.json`);
    const file = join(dirname(manifest), '4.0.0_best_int', `${code}.traineddata.gz`);
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** The languages of `wanted` whose data is installed, and those that are not. */
export function installedLanguages(wanted: string[]): { found: string[]; missing: string[] } {
  const found = wanted.filter((code) => languageDataFile(code) !== undefined);
  return { found, missing: wanted.filter((code) => !found.includes(code)) };
}

/**
 * One folder holding every language's data: tesseract.js reads `<langPath>/<code>.traineddata.gz`
 * from a single folder, and each language package has its own. Links, made once per thread in
 * the temporary folder (an emptyDir in the chart).
 */
export function languageFolder(codes: string[]): string {
  const folder = mkdtempSync(join(tmpdir(), 'kb-ocr-'));
  for (const code of codes) {
    const file = languageDataFile(code);
    if (!file) throw new Error(`OCR language data for "${code}" is not installed`);
    symlinkSync(file, join(folder, `${code}.traineddata.gz`));
  }
  return folder;
}
