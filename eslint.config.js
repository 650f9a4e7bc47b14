import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'data/**', 'bench/results/**'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-restricted-imports': ['error', { patterns: ['../../../*'] }],
    },
  },
  {
    // The data layer's one entry (src/database/index.ts): code outside it imports
    // nothing else of src/database/ but the frozen migration helpers, which migrations import by
    // path as frozen text; nor does it read which database it runs on.
    files: ['**/*.ts'],
    ignores: ['src/database/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['../../../*'] },
            {
              regex: '(^|/)database/(?!index\\.js$|frozen/)',
              message:
                "Import the data layer from 'src/database/index.js' (frozen migration helpers by their path).",
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector: "MemberExpression[property.name='dialect']",
          message:
            'Only src/database/ knows the dialect: ask the data layer for what differs (Database.sql() takes a text per database).',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        setInterval: 'readonly',
        setImmediate: 'readonly',
        clearInterval: 'readonly',
        fetch: 'readonly',
      },
    },
  },
);
