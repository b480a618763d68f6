import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The arrows point down: http -> domain -> db, and only the composition root (main.ts,
 * server.ts, cli/) starts the pipeline. test/lint/boundaries.test.ts checks that these rules
 * catch a bad import.
 */
const noHttp = {
  group: ['**/http/**', '**/http/*'],
  message: 'db/ and domain/ never import http/ (data flows http -> domain -> db).',
};
const noPipeline = {
  group: ['**/pipeline/**', '**/pipeline/*'],
  message: 'Only the composition root (src/main.ts, src/server.ts, src/cli/) imports pipeline/.',
};
const noDomain = {
  group: ['**/domain/**', '**/domain/*'],
  message: 'db/ never imports domain/: the store knows rows, not rules.',
};

export const boundaries = [
  {
    files: ['src/db/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noHttp, noPipeline, noDomain] }] },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noHttp, noPipeline] }] },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/main.ts', 'src/server.ts', 'src/cli/**', 'src/db/**', 'src/domain/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [noPipeline] }] },
  },
];

export default tseslint.config(
  {
    ignores: [
      'build/',
      'dist/',
      'data/',
      'public/',
      '.tap/',
      'node_modules/',
      'bench/.work/',
      '.runtime/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'no-console': 'off',
    },
  },
  {
    // Tests read response bodies of many shapes; `any` keeps assertions readable there.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...boundaries,
);
