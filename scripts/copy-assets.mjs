// Copies the non-TypeScript files the compiled service reads at run time (SQL migrations) into dist/.
import { cpSync } from 'node:fs';

cpSync(new URL('../src/store/migrations/', import.meta.url), new URL('../dist/store/migrations/', import.meta.url), {
  recursive: true,
});
