// Run after each integration test file's environment is set up (jest's setupFilesAfterEnv): the file fails
// if any answer it received broke the OpenAPI document, even one its client swallowed (a retry loop, an
// SDK's error value), so that drift cannot hide behind a test that tolerates errors.
import { afterAll, expect } from '@jest/globals';
import { apiResponseProblems } from './api-validation.ts';

afterAll(() => {
  expect(apiResponseProblems()).toEqual([]);
});
