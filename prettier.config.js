// The code's own style, so the one-time format changes as little as possible: single quotes,
// semicolons, trailing commas, and lines of up to 140 characters (the limit the code was written to;
// 120 would rewrap about 7,000 more lines).
/** @type {import('prettier').Config} */
export default {
  printWidth: 140,
  singleQuote: true,
  overrides: [
    // JSON with comments is read by wrangler and by TypeScript's config reader; keep it plain JSON.
    { files: '*.jsonc', options: { trailingComma: 'none' } },
  ],
};
