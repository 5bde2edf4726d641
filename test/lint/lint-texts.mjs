// Lints texts at virtual paths with the repository's ESLint config, for test/lint/rules.spec.ts
// (ESLint loads its config as an ES module, which Jest's sandbox cannot). Reads
// `{ "<path>": "<text>" }` on stdin, prints `{ "<path>": ["<rule>: <message>"] }`. Type-aware
// parsing needs a file on disk, so it is off here, with the two rules that need it.
import { ESLint } from 'eslint';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString('utf8'));

const eslint = new ESLint({
  overrideConfig: [
    {
      files: ['**/*.ts'],
      languageOptions: { parserOptions: { project: null } },
      rules: {
        '@typescript-eslint/no-floating-promises': 'off',
        '@typescript-eslint/no-misused-promises': 'off',
      },
    },
  ],
});
const out = {};
for (const [filePath, text] of Object.entries(texts)) {
  // An ignored path (generated code) gives no result and so no messages.
  const [result] = await eslint.lintText(text, { filePath, warnIgnored: false });
  out[filePath] = (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}
process.stdout.write(JSON.stringify(out));
