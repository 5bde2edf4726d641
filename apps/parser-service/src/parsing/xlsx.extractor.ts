import { ExtractionError } from './extraction.errors';
import type { Extracted, ExtractInput, ExtractionLimits } from './extraction.model';
import { type Sheet, sheetsToText } from './text.builder';
import { inspectZip } from './zip.inspector';

/**
 * Every sheet's cells as text (exceljs), by sheet and row, the displayed value of each cell (a
 * formula's result, a date as formatted). The archive is counted first (zip.inspector.ts); exceljs
 * opens it with the same JSZip. A merged range is read once, at its top-left cell.
 */
export async function extractXlsx(
  input: ExtractInput,
  limits: ExtractionLimits,
  tableMode: 'records' | 'text' = 'records',
): Promise<Extracted> {
  await inspectZip(input.body, limits, input.filename);
  // exceljs is CommonJS whose exports Node cannot name from an import(): its `default` is the module.
  const { Workbook } = (await import('exceljs')).default;
  const sheets: Sheet[] = [];
  try {
    const workbook = new Workbook();
    // exceljs types its Buffer as an ArrayBuffer; JSZip reads the Node Buffer as it is.
    await workbook.xlsx.load(input.body as unknown as Parameters<typeof workbook.xlsx.load>[0]);
    workbook.eachSheet((worksheet) => {
      const sheet: Sheet = { name: worksheet.name, rows: [] };
      worksheet.eachRow((row, rowNumber) => {
        const cells: Sheet['rows'][number]['cells'] = [];
        row.eachCell((cell, column) => {
          if (cell.isMerged && cell.master.address !== cell.address) return;
          const value = cell.text;
          if (/\S/.test(value)) cells.push({ column, value });
        });
        if (cells.length > 0) sheet.rows.push({ row: rowNumber, cells });
      });
      sheets.push(sheet);
    });
  } catch (error) {
    throw new ExtractionError(
      'parse_error',
      `"${input.filename}" is not a readable XLSX: ${String(error)}`,
    );
  }
  return { ...sheetsToText(sheets, tableMode), format: 'xlsx' };
}
