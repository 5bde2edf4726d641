import {
  documentIndexStateConformance,
  indexGenerationsConformance,
} from '@kb/index-state/test/support/conformance';

import { MemoryDocumentIndexState } from './memory-document-index-state';
import { MemoryIndexGenerations } from './memory-index-generations';

describe('MemoryIndexGenerations', () => {
  const generations = new MemoryIndexGenerations();
  indexGenerationsConformance(() => generations);
});

describe('MemoryDocumentIndexState', () => {
  const state = new MemoryDocumentIndexState();
  documentIndexStateConformance(() => state);
});
