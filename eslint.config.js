// Lint rules: typescript-eslint's recommended set, with type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'test/bench/results/**', 'charts/**', 'build/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['*.js'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      // Its KubeConfig opens a connection per API call; effects/kubernetes/kube-config.ts keeps them.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@kubernetes/client-node',
              importNames: ['KubeConfig'],
              allowTypeImports: true,
              message: 'make it from effects/kubernetes/kube-config.ts: it keeps connections between calls',
            },
          ],
        },
      ],
    },
  },
  // The one place that may: it extends it.
  { files: ['effects/kubernetes/kube-config.ts'], rules: { '@typescript-eslint/no-restricted-imports': 'off' } },
  {
    // The debug page's own scripts run in the browser as they are (no build step): plain JavaScript.
    files: ['manager/debug/static/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      parserOptions: { program: null, project: false, projectService: false },
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'CustomEvent',
          'DOMParser',
          'EventSource',
          'URL',
          'clearInterval',
          'document',
          'fetch',
          'location',
          'performance',
          'requestAnimationFrame',
          'setInterval',
          'setTimeout',
          'window',
        ].map((name) => [name, 'readonly']),
      ),
    },
  },
);
